"""The settings file shared by the running app and the command line: a command's change (rules imported, a
destination added) survives the app's next save, and the app's own change survives too; where both changed the
same value the app's is the newer."""

from __future__ import annotations

import sys
import threading
import types

import pytest

from helpers.cli_here import run_here
from helpers.sigma_samples import VIP_DELETED, has_vip_deleted
from helpers.slack import bound
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.settings.document import Settings
from tenant_events.settings.shared_file import SharedSettings, edited_settings, merge

pytestmark = pytest.mark.expect_warning_logs  # (commands run in this process) a command logs what it refuses


def test_rules_imported_by_a_command_survive_the_apps_next_save(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = SharedSettings(paths)  # the app starts and reads the file (none yet)
    mine = app.base.model_copy(deep=True)

    (tmp_path / "vip.yml").write_text(VIP_DELETED)
    done = run_here(["rules", "import", str(tmp_path / "vip.yml"), "--data-dir", str(tmp_path)])
    assert done.returncode == 0, done.stderr

    mine.notifications.do_not_disturb = True  # then the user changes something in the app
    written = app.save(mine)
    on_disk = load_settings(paths)
    assert has_vip_deleted(on_disk) and on_disk.notifications.do_not_disturb
    assert written == on_disk and app.base == on_disk


def test_the_app_takes_in_what_a_command_saved_without_writing(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    app = SharedSettings(paths)
    mine = app.base.model_copy(deep=True)
    (tmp_path / "vip.yml").write_text(VIP_DELETED)
    assert (
        run_here(["rules", "import", str(tmp_path / "vip.yml"), "--data-dir", str(tmp_path)]).returncode == 0
    )
    before = paths.settings_file.read_bytes()

    fresh = app.refresh(mine)
    assert has_vip_deleted(fresh)
    assert paths.settings_file.read_bytes() == before  # nothing written
    assert app.save(fresh) == load_settings(paths)  # and the next save has nothing to fold in
    assert has_vip_deleted(load_settings(paths))


def test_a_removal_in_the_app_and_an_addition_by_a_command_both_stay(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    save_settings(
        paths,
        Settings.model_validate(
            {
                "tenants": [
                    {"name": "acme", "domain": "acme.example.com", "client_id": "c1"},
                    {"name": "globex", "domain": "globex.example.com", "client_id": "c2"},
                ],
                "alerts": {"rules": [{"id": "off-hours", "enabled": False}]},
            }
        ),
    )
    app = SharedSettings(paths)
    mine = app.base.model_copy(deep=True)
    theirs = load_settings(paths)  # a command's read, change and write
    theirs.alerts.rules.append({"id": "org-deleted", "severity": "info"})
    theirs.alerts.rules[0]["enabled"] = True  # and it switched a rule the app changes too
    save_settings(paths, theirs)

    mine.tenants = [t for t in mine.tenants if t.name != "acme"]
    mine.alerts.rules[0]["severity"] = "critical"
    on_disk = app.save(mine)
    assert [t.name for t in on_disk.tenants] == ["globex"]
    assert on_disk.alerts.rules == [
        {"id": "off-hours", "enabled": True, "severity": "critical"},  # both sides' fields of one rule
        {"id": "org-deleted", "severity": "info"},
    ]


@pytest.mark.parametrize(
    ("base", "mine", "theirs", "result"),
    [
        ({"a": 1}, {"a": 2}, {"a": 1}, {"a": 2}),  # only mine changed
        ({"a": 1}, {"a": 1}, {"a": 3}, {"a": 3}),  # only theirs changed
        ({"a": 1}, {"a": 2}, {"a": 3}, {"a": 2}),  # both: the app's is the newer
        ({"a": 1, "b": 1}, {"b": 1}, {"a": 1, "b": 2}, {"b": 2}),  # removed here, left alone there
        ({"a": 1}, {}, {"a": 5}, {"a": 5}),  # removed here, edited there: the edit stays
        ({"l": ["x", "y"]}, {"l": ["x"]}, {"l": ["x", "y", "z"]}, {"l": ["x"]}),  # plain lists are values
        (
            {"l": [{"name": "a", "v": 1}]},
            {"l": [{"name": "a", "v": 1}, {"name": "b", "v": 2}]},
            {"l": [{"name": "c", "v": 3}, {"name": "a", "v": 1}]},
            {"l": [{"name": "a", "v": 1}, {"name": "b", "v": 2}, {"name": "c", "v": 3}]},
        ),
        (
            {"l": [{"name": "a"}, {"name": "a"}]},  # a name twice: a plain list, the app's wins
            {"l": [{"name": "a"}]},
            {"l": [{"name": "b"}]},
            {"l": [{"name": "a"}]},
        ),
    ],
)
def test_merge(base, mine, theirs, result):
    assert merge(base, mine, theirs) == result


def test_a_command_that_read_the_file_before_the_app_saved_keeps_the_apps_change(tmp_path):
    """`login` reads the settings, then waits on the network; the app saves a tray choice meanwhile."""
    paths = AppPaths.resolve(tmp_path)
    app = SharedSettings(paths)
    pager = DestinationProfile(name="pager", url_masked="ntfy://…@ntfy.example/alerts")
    with edited_settings(paths) as settings:  # the command's read
        mine = app.base.model_copy(deep=True)
        mine.notifications.do_not_disturb = True
        app.save(mine)  # the app's save, while the command works
        settings.destinations.append(pager)  # the command's change, written as the block ends
    on_disk = load_settings(paths)
    assert on_disk.notifications.do_not_disturb and on_disk.destinations == [pager]


def test_a_command_that_fails_writes_nothing(tmp_path):
    paths = AppPaths.resolve(tmp_path)
    save_settings(paths, Settings(theme="dark"))
    before = paths.settings_file.read_bytes()
    with pytest.raises(RuntimeError), edited_settings(paths) as settings:
        settings.theme = "light"
        raise RuntimeError("a check failed half-way")
    assert paths.settings_file.read_bytes() == before


def test_a_hand_edit_saved_the_moment_after_the_app_wrote_is_still_taken_in(tmp_path):
    """A save by something that takes no lock (the user's editor) landing right after the app's own write, while
    the app still finishes its save (the directory's fsync): the app must not take that file for its own and miss
    the change for good. A profile hook makes the editor's save at exactly that moment: when the app's write
    returns."""
    paths = AppPaths.resolve(tmp_path)
    acme = {"name": "acme", "domain": "acme.example.com", "client_id": "c1"}
    save_settings(paths, Settings.model_validate({"tenants": [acme]}))
    app = SharedSettings(paths)
    mine = app.base.model_copy(deep=True)
    mine.notifications.do_not_disturb = True
    edited: list[bool] = []

    def editor_removes_the_tenant(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "return" and frame.f_code.co_name == "write_private" and not edited:
            edited.append(True)
            by_hand = load_settings(paths)
            by_hand.tenants = []
            save_settings(paths, by_hand)  # an atomic replace, as editors save

    sys.setprofile(editor_removes_the_tenant)
    try:
        app.save(mine)
    finally:
        sys.setprofile(None)
    assert edited and load_settings(paths).tenants == []
    assert app.changed(), "the editor's save was taken for the app's own"
    fresh = app.refresh(mine)
    assert fresh.tenants == [] and fresh.notifications.do_not_disturb


def test_a_command_that_saves_while_the_app_saves_keeps_its_change(tmp_path):
    """A command's whole save (`destinations add`, say) landing between the app's read of the file and its write:
    written over, the command's change would be gone without a word. The hook starts the command when the app's
    read returns and gives it a second to finish: it waits for the app's save instead, then folds its change in."""
    paths = AppPaths.resolve(tmp_path)
    app = SharedSettings(paths)
    mine = app.base.model_copy(deep=True)
    mine.notifications.do_not_disturb = True
    pager = DestinationProfile(name="pager", url_masked="ntfy://…@ntfy.example/alerts")
    command: list[threading.Thread] = []

    def add_pager() -> None:
        with edited_settings(paths) as settings:
            settings.destinations.append(pager)

    def command_saves_meanwhile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "return" and frame.f_code.co_name == "read_current" and not command:
            command.append(threading.Thread(target=add_pager))
            command[0].start()
            command[0].join(timeout=1.0)

    sys.setprofile(command_saves_meanwhile)
    try:
        app.save(mine)
    finally:
        sys.setprofile(None)
    command[0].join(timeout=bound(10))
    on_disk = load_settings(paths)
    assert on_disk.destinations == [pager], "the command's change was written over"
    assert on_disk.notifications.do_not_disturb
