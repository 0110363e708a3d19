"""A hub profile's team archive (docs/archive.md "Team archive"): a PostgreSQL catalog without a password and an
absolute shared folder, both or neither, and every event type followed."""

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
        ({"team_archive": CATALOG, "team_archive_path": "s3://bucket/e"}, "is not a folder"),
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
