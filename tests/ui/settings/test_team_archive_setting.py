"""A hub tenant's team archive in Settings ▸ Tenants ▸ "Team archive…", in the real app with the real keyring: each
field is checked as it is typed with its error right under it (a URL with a password in it, a relative folder,
one given without the other, a tenant that follows some types only); Save keeps the catalog's password in the
keyring (never in the settings file), saves the catalog and folder in the hub profile and reads the tenant again
with the archive — what `--team-archive` and `--team-archive-path` give `stream --hub` on the command line; an
s3:// location's fields are checked the same way, and its access key id and secret go to the keyring only."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, save_screenshot, until
from helpers.keyrings import session_secret_store
from helpers.nats_hub import free_port
from tenant_events.hub.credentials import add_hub_profile
from tenant_events.settings import HubProfile, load_settings
from tenant_events.tenant.team_archive import keys_slot, password_slot
from tenant_events.ui.app.hub_session import HubSession
from tenant_events.ui.dialogs.team_archive_dialog import FIELDS, TeamArchiveDialog

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]

CATALOG = "postgres:dbname=events host=127.0.0.1 user=viewer"


def _profile(**more: object) -> HubProfile:
    return HubProfile.model_validate(
        {"name": "team", "hub_urls": ["nats://127.0.0.1:4222"], "hub_tenant": "acme", **more}
    )


def test_every_field_says_what_is_wrong_under_it(qtbot):
    d = TeamArchiveDialog(_profile())
    qtbot.addWidget(d)
    d.show()
    assert d.save_button.isEnabled() and d.choice is not None and not d.choice.profile.team_archive  # none
    d.catalog.setText("postgres://viewer:s3cret@db.example.org/events")
    said = d.error_text("team_archive")
    assert said.startswith("is not a PostgreSQL catalog") and "s3cret" not in said
    assert not d.save_button.isEnabled()
    d.catalog.setText("postgres:dbname=events host=db user=viewer password=s3cret")
    assert "holds a password" in d.error_text("team_archive") and "s3cret" not in d.error_text("team_archive")
    d.catalog.setText("postgres:host=db user=viewer")
    assert d.error_text("team_archive") == "names no database; add dbname=NAME"
    d.catalog.setText(CATALOG)
    assert not d.error_text("team_archive")
    assert d.error_text("team_archive_path") == "is required for a team archive (give both, or neither)"
    d.folder.setText("team/events")
    assert (
        d.error_text("team_archive_path")
        == "'team/events' is not an absolute folder path (e.g. /mnt/team/events) or s3:// location"
    )
    d.folder.setText("ftp://files/events")
    assert "is not a place for the team archive's files" in d.error_text("team_archive_path")
    assert not d.endpoint.isEnabled() and not d.secret.isEnabled()  # (for object storage only)
    d.folder.setText("s3://Team_Bucket/events")
    assert d.error_text("team_archive_path").startswith("names no valid bucket")
    d.folder.setText("s3://team-bucket/events/")
    assert not d.error_text("team_archive_path") and d.endpoint.isEnabled() and d.secret.isEnabled()
    d.endpoint.setText("https://s3.example.org/team-bucket")
    assert d.error_text("team_archive_endpoint").startswith("has more than HOST[:PORT]")
    d.endpoint.setText("https://minio:s3cret@s3.example.org")
    assert "holds a user or password" in d.error_text("team_archive_endpoint")
    assert "s3cret" not in d.error_text("team_archive_endpoint") and not d.save_button.isEnabled()
    d.endpoint.setText("https://s3.example.org:9000")
    d.region.setText("Frankfurt 1")
    assert "is not a region" in d.error_text("team_archive_region")
    d.region.setText("eu-central-1")
    d.secret.setText("Secret-of-the-key-81d")
    assert d.error_text("key_id") == "is required with the secret" and not d.save_button.isEnabled()
    d.key_id.setText("AKIA 123")
    assert d.error_text("key_id").startswith("is not an access key id")
    assert "Secret-of-the-key-81d" not in "".join(d.error_text(k) for k in FIELDS)
    d.key_id.setText("AKIAEXAMPLE123")
    d.url_style.setCurrentIndex(d.url_style.findData("path"))
    assert not any(d.error_text(k) for k in FIELDS) and d.save_button.isEnabled()
    choice = d.choice
    assert choice is not None and choice.keys == ("AKIAEXAMPLE123", "Secret-of-the-key-81d")
    assert "Secret-of-the-key-81d" not in repr(choice) + choice.profile.model_dump_json()
    assert (choice.profile.team_archive_path, choice.profile.team_archive_endpoint) == (
        "s3://team-bucket/events",
        "https://s3.example.org:9000",
    )
    assert (choice.profile.team_archive_region, choice.profile.team_archive_url_style) == (
        "eu-central-1",
        "path",
    )
    save_screenshot(d, "team-archive-dialog-s3")
    d.folder.setText("/mnt/team/events")
    assert not any(d.error_text(k) for k in FIELDS) and not d.endpoint.isEnabled()
    assert d.save_button.isEnabled()
    d.catalog.setText("")
    assert d.error_text("team_archive") == "is required for a team archive (give both, or neither)"
    d.password.setText("pw")
    assert d.error_text("password").startswith("there is no catalog to keep it for")
    d.catalog.setText(CATALOG)
    assert d.save_button.isEnabled()
    save_screenshot(d, "team-archive-dialog")

    some_types = TeamArchiveDialog(_profile(event_types=["user.created"]))
    qtbot.addWidget(some_types)
    some_types.catalog.setText(CATALOG)
    some_types.folder.setText("/mnt/team/events")
    assert "follows some event types only" in some_types.error_text("team_archive")
    assert not some_types.save_button.isEnabled()
    save_screenshot(some_types, "team-archive-dialog-some-types")


@pytest.mark.hub
@pytest.mark.expect_warning_logs  # neither the hub nor the catalog's server runs: the session says so
def test_settings_saves_the_team_archive_and_reads_the_tenant_with_it(qloop, ui_paths, tmp_path):
    store = session_secret_store()
    name = f"team-{uuid.uuid4().hex[:6]}"
    catalog = f"postgres:dbname=events host=127.0.0.1 port={free_port()} user=viewer-{name}"
    folder = tmp_path / "shared"
    add_hub_profile(
        ui_paths,
        store,
        "viewer-password",
        name=name,
        hub_urls=[f"nats://127.0.0.1:{free_port()}"],
        hub_tenant="acme",
        auth="password",
        user="viewer",
    )

    async def scenario() -> None:
        async with running_app(ui_paths, secret_store=store) as app:
            before = app.sessions[name]
            app.open_settings()
            settings = app.settings_dialog
            settings.tenant_list.setCurrentRow(0)
            assert settings.team_archive_button.isEnabled()
            settings.team_archive_button.click()
            dialog = next(d for d in app.window.findChildren(TeamArchiveDialog) if d.isVisible())
            dialog.catalog.setText(catalog)
            assert "required" in dialog.error_text("team_archive_path") and not dialog.save_button.isEnabled()
            dialog.folder.setText(str(folder))
            dialog.password.setText("lake-password")
            assert dialog.save_button.isEnabled()
            dialog.save_button.click()
            await until(lambda: not dialog.isVisible(), 20, "the dialog to close once saved")
            saved = load_settings(ui_paths).hub(name)
            assert saved is not None and (saved.team_archive, saved.team_archive_path) == (
                catalog,
                str(folder),
            )
            assert store.get(password_slot(catalog)) == "lake-password"
            assert "lake-password" not in ui_paths.settings_file.read_text()
            await until(lambda: app.sessions.get(name) not in (None, before), 20, "the tenant read again")
            session = app.sessions[name]
            assert isinstance(session, HubSession) and session.hub_profile.team_archive == catalog
            # the files moved to a bucket: its endpoint in the profile, its keys in the keyring only
            settings.team_archive_button.click()
            dialog = next(d for d in app.window.findChildren(TeamArchiveDialog) if d.isVisible())
            dialog.folder.setText("s3://team-bucket/events")
            dialog.endpoint.setText(f"http://127.0.0.1:{free_port()}")
            dialog.key_id.setText("AKIAEXAMPLE123")
            dialog.secret.setText("Secret-of-the-key-81d")
            assert dialog.save_button.isEnabled()
            dialog.save_button.click()
            await until(lambda: not dialog.isVisible(), 20, "the dialog to close once saved")
            in_bucket = load_settings(ui_paths).hub(name)
            assert in_bucket is not None and in_bucket.team_lake is not None
            assert in_bucket.team_archive_path == "s3://team-bucket/events"
            assert store.get(keys_slot(in_bucket.team_lake)) == "AKIAEXAMPLE123\nSecret-of-the-key-81d"
            assert "Secret-of-the-key-81d" not in ui_paths.settings_file.read_text()
            assert "AKIAEXAMPLE123" not in ui_paths.settings_file.read_text()
            settings.buttons.button(settings.buttons.StandardButton.Ok).click()  # OK keeps it
            await asyncio.sleep(0)
            await until(lambda: load_settings(ui_paths).hub(name) == in_bucket, 10, "the settings file")

    run_async(qloop, scenario())
