"""A hub profile's team archive (docs/archive.md "Team archive"): a PostgreSQL catalog without a password and an
absolute shared folder or an s3:// location (with its endpoint, region and URL style, never its keys), both or
neither, and every event type followed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tenant_events.settings.hubs import HubProfile

BASE = {"name": "acme", "hub_urls": ["nats://127.0.0.1:4222"], "hub_tenant": "acme"}
CATALOG = "postgres:dbname=events host=db.example.org user=viewer"


def test_a_catalog_and_a_folder_are_kept_as_given():
    profile = HubProfile(**BASE, team_archive=f"  {CATALOG} ", team_archive_path="/mnt/team/events/")
    assert (profile.team_archive, profile.team_archive_path) == (CATALOG, "/mnt/team/events")
    assert HubProfile(**BASE).team_archive == ""


def test_an_s3_location_is_kept_in_one_spelling_with_how_to_reach_it():
    profile = HubProfile(
        **BASE,
        team_archive=CATALOG,
        team_archive_path="s3://team-events/acme/lake/",
        team_archive_endpoint="https://minio.example.org:9000/",
        team_archive_region="eu-central-1",
        team_archive_url_style="Path",
    )
    lake = profile.team_lake
    assert lake is not None and lake.in_object_storage and lake.bucket == "team-events"
    assert (lake.data_path, lake.endpoint, lake.region, lake.url_style) == (
        "s3://team-events/acme/lake",
        "https://minio.example.org:9000",
        "eu-central-1",
        "path",
    )
    assert "secret" not in profile.model_dump_json().lower()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        (
            {"team_archive": "postgres:dbname=e password=Sekr3t", "team_archive_path": "/e"},
            "holds a password",
        ),
        (
            {"team_archive": "postgresql://u:Sekr3t@db/e", "team_archive_path": "/e"},
            "not a PostgreSQL catalog",
        ),
        ({"team_archive": "postgres:host=db", "team_archive_path": "/e"}, "names no database"),
        ({"team_archive": CATALOG, "team_archive_path": "team/e"}, "absolute folder path"),
        ({"team_archive": CATALOG, "team_archive_path": "gs://bucket/e"}, "gs:// is not a place"),
        ({"team_archive": CATALOG, "team_archive_path": "s3://b/e"}, "names no valid bucket"),
        (
            {"team_archive": CATALOG, "team_archive_path": "s3://AKIA:Sekr3t@bucket/e"},
            "without a query, user",
        ),
        ({"team_archive": CATALOG, "team_archive_path": "s3://bucket/e/../f"}, "not be . or .."),
        (
            {
                "team_archive": CATALOG,
                "team_archive_path": "s3://bucket/e",
                "team_archive_endpoint": "https://k:Sekr3t@h",
            },
            "holds a user or password",
        ),
        (
            {"team_archive": CATALOG, "team_archive_path": "s3://bucket/e", "team_archive_url_style": "dns"},
            "is not a URL style",
        ),
        (
            {"team_archive": CATALOG, "team_archive_path": "/e", "team_archive_endpoint": "https://h"},
            "team_archive_endpoint: is for files in object storage",
        ),
        ({"team_archive": CATALOG}, "team_archive_path: is required"),
        ({"team_archive_path": "/e"}, "team_archive: is required"),
        (
            {"team_archive": CATALOG, "team_archive_path": "/e", "event_types": ["user.created"]},
            "every event type",
        ),
    ],
)
def test_a_team_archive_named_wrong_is_refused_without_repeating_a_password(fields, said):
    with pytest.raises(ValidationError) as caught:
        HubProfile(**BASE, **fields)
    assert said in str(caught.value)
    assert "Sekr3t" not in str(caught.value)
