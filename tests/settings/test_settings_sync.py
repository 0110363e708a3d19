"""The app's copy of the settings beside commands writing the same file: the Settings dialog's OK does not undo
what a command saved while it was open, a change the app makes while a save runs is not lost, saves land in
the order they were asked for, what comes in with a save reaches the app, and settings that cannot stand beside
the app's are kept in a file of their own."""

from __future__ import annotations

import asyncio

import pytest

from tenant_events.paths import AppPaths
from tenant_events.settings import SettingsSync, SharedSettings, load_settings, save_settings
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.settings.document import Settings
from tenant_events.settings.hubs import HubProfile

PAGER = DestinationProfile(name="pager", url_masked="ntfy://…@ntfy.example/alerts")


class App:
    """What the desktop app hands the sync: what it took in, what it reported."""

    def __init__(self, paths: AppPaths) -> None:
        self.taken: list[tuple[Settings, Settings]] = []
        self.reported: list[tuple[str, str]] = []
        self.sync = SettingsSync(
            SharedSettings(paths),
            lambda before, now: self.taken.append((before, now)),
            lambda title, text: self.reported.append((title, text)),
        )


def _command(paths: AppPaths, change) -> None:
    """A command's read, change and write of the settings file (as `destinations add` does)."""
    settings = load_settings(paths)
    change(settings)
    save_settings(paths, settings)


def test_the_dialogs_ok_keeps_what_a_command_saved_while_it_was_open(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)
    edited = app.sync.open_dialog().model_copy(deep=True)
    _command(paths, lambda s: s.destinations.append(PAGER))
    app.sync.follow()  # the app's once-a-second look at the file
    edited.theme = "dark"  # the user's change in the dialog, then OK
    applied = app.sync.from_dialog(edited)
    asyncio.run(app.sync.save())
    on_disk = load_settings(paths)
    assert on_disk.theme == "dark" and on_disk.destinations == [PAGER]
    assert applied == on_disk == app.sync.settings


def test_a_change_made_while_a_save_runs_and_what_the_save_brought_in_both_stay(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)
    _command(paths, lambda s: s.destinations.append(PAGER))
    write = app.sync.shared.save

    def save_while_the_user_changes_something(mine: Settings) -> Settings:
        app.sync.settings.theme = "dark"  # (the loop thread, while the file is being written)
        return write(mine)

    app.sync.shared.save = save_while_the_user_changes_something  # type: ignore[method-assign]
    asyncio.run(app.sync.save())
    assert app.sync.settings.destinations == [PAGER] and app.sync.settings.theme == "dark"
    assert [now.destinations for _, now in app.taken] == [[PAGER]]  # the app was told: sessions, rules
    app.sync.shared.save = write  # type: ignore[method-assign]
    asyncio.run(app.sync.save())
    on_disk = load_settings(paths)
    assert on_disk.destinations == [PAGER] and on_disk.theme == "dark"


def test_saves_land_in_the_order_they_were_asked_for(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)

    async def two_saves() -> None:
        app.sync.settings.theme = "dark"
        first = asyncio.ensure_future(app.sync.save())
        await asyncio.sleep(0)  # the first has its turn and is writing
        app.sync.settings.theme = "light"
        await asyncio.gather(first, app.sync.save())

    asyncio.run(two_saves())
    assert load_settings(paths).theme == "light" == app.sync.settings.theme


def test_a_tenant_a_command_added_reaches_the_app_through_its_next_save(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)
    _command(paths, lambda s: s.upsert(_profile("globex")))
    app.sync.settings.theme = "dark"  # the app saves before its once-a-second look came round
    asyncio.run(app.sync.save())
    [(before, now)] = app.taken
    assert [t.name for t in before.tenants] == [] and [t.name for t in now.tenants] == ["globex"]


@pytest.mark.expect_warning_logs  # the log says where they were kept, as it should
def test_settings_that_cannot_stand_beside_the_apps_are_kept_aside_and_said(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)

    def tenant_named_acme(settings: Settings) -> None:
        settings.upsert(_profile("acme"))
        settings.destinations.append(PAGER)

    _command(paths, tenant_named_acme)
    hub = HubProfile(name="acme", hub_urls=["tls://hub.example.com:4222"], hub_tenant="acme")
    app.sync.settings.hubs.append(hub)  # the app's change, saved before its look at the file came round
    asyncio.run(app.sync.save())
    assert [h.name for h in load_settings(paths).hubs] == ["acme"]
    [kept] = list(tmp_path.glob("settings.json.kept-*"))
    held = Settings.model_validate_json(kept.read_text())
    assert [t.name for t in held.tenants] == ["acme"] and held.destinations == [PAGER]
    assert app.reported and str(kept) in app.reported[0][1]


def _profile(name: str):
    from tenant_events.settings import TenantProfile

    return TenantProfile(name=name, domain=f"{name}.example.com", client_id="c1")


@pytest.mark.expect_warning_logs  # the log says where the file was kept, as it should
@pytest.mark.parametrize(
    ("found", "why"),
    [
        ('{"schema_version": 2, "tenants": [', "not valid JSON"),
        ('{"schema_version": 99, "theme": "dark"}', "written by a newer Tenant Events (schema 99"),
        ('{"schema_version": 2, "theme": "purple"}', "theme: Input should be"),
    ],
)
def test_a_damaged_or_newer_file_found_at_a_save_is_kept_as_it_was_and_said(tmp_path, found, why):
    paths = AppPaths.resolve(tmp_path)
    app = App(paths)
    paths.settings_file.write_text(found)  # a hand edit gone wrong, or a newer app, while this one runs
    app.sync.follow()  # nothing taken in from it
    assert app.taken == [] and app.sync.settings == Settings()
    app.sync.settings.theme = "light"
    asyncio.run(app.sync.save())
    [kept] = list(tmp_path.glob("settings.json.kept-*"))
    assert kept.read_text() == found  # byte for byte
    assert load_settings(paths).theme == "light"
    [(title, text)] = app.reported
    assert title == "The settings file was kept aside" and why in text and str(kept) in text
