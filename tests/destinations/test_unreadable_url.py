"""A destination whose URL cannot be read from the keyring for a while (its daemon gone from the session bus, or
no keyring answering when the relay opened it) keeps its alerts pending and delivers them once the URL can be
read: a keyring that fails for a moment never routes an alert to no destination, and the relay says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from helpers.deliveries import alert_write, run_worker, store_alerts
from tenant_events.auth.secret_store import MemorySecretStore, SecretStoreUnavailable
from tenant_events.destinations import worker as worker_module
from tenant_events.destinations.registry import make_destination, slot
from tenant_events.destinations.worker import Target
from tenant_events.paths import AppPaths
from tenant_events.settings.shared_file import edited_settings
from tenant_events.tenant import deliveries as deliveries_module
from tenant_events.tenant.deliveries import DestinationTargets, keyring_opener
from tenant_events.tenant.team_alerts import TeamAlerts

GONE = "the system keyring refused to read the sign-in: Message recipient disconnected from message bus"


class FlakyKeyring(MemorySecretStore):
    """A system keyring that refuses every read until `answers` is set (a daemon gone for a while)."""

    def __init__(self) -> None:
        super().__init__("flaky keyring")
        self.persistent = True
        self.answers = False

    def get(self, tenant: str) -> str | None:
        if not self.answers:
            raise SecretStoreUnavailable(GONE)
        return super().get(tenant)


@pytest.fixture(autouse=True)
def _quick(monkeypatch):
    """The URL read again, and the waiting deliveries tried again, within a fraction of a second (not raising
    when the setting is missing: the test shows what older code does)."""
    monkeypatch.setattr(deliveries_module, "REREAD_S", 0.1, raising=False)
    monkeypatch.setattr(worker_module, "UNREADABLE_RETRY_S", 0.1, raising=False)


def _destination(tmp_path: Path, url: str, store: MemorySecretStore) -> AppPaths:
    paths = AppPaths.resolve(str(tmp_path / "data")).ensure()
    profile = make_destination("ops", url)
    MemorySecretStore.set(store, slot(paths, "ops"), url)
    with edited_settings(paths) as settings:
        settings.destinations = [profile]
    return paths


def _deliveries(db: Path) -> list[tuple[str, str, str | None]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT destination, state, last_error FROM alert_deliveries").fetchall()
    finally:
        conn.close()


@pytest.mark.expect_warning_logs  # the destination that cannot be used is logged
def test_an_alert_waits_for_a_keyring_that_does_not_answer_then_goes_out(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    keyring = FlakyKeyring()
    paths = _destination(tmp_path, f"json://127.0.0.1:{httpserver.port}/hook", keyring)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    targets = DestinationTargets(paths, lambda: keyring)
    # the keyring does not answer: the alert is routed to its destination and waits there, pending, saying why
    run_worker(db, targets, lambda: any(GONE in (e or "") for _, _, e in _deliveries(db)))
    assert [(d, s) for d, s, _ in _deliveries(db)] == [("ops", "pending")]
    assert GONE in targets.problems["ops"] and len(httpserver.log) == 0
    keyring.answers = True  # the keyring is back: the same worker's next pass delivers it
    run_worker(db, targets, lambda: len(httpserver.log) == 1)
    assert [(d, s) for d, s, _ in _deliveries(db)] == [("ops", "delivered")] and targets.problems == {}


@pytest.mark.expect_warning_logs
def test_a_keyring_missing_when_opened_is_opened_again_and_the_alert_goes_out(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    keyring = FlakyKeyring()
    keyring.answers = True
    paths = _destination(tmp_path, f"json://127.0.0.1:{httpserver.port}/hook", keyring)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    opened: list[MemorySecretStore] = []

    def open_store() -> MemorySecretStore:
        """The first open finds no keyring (the session-only store open_secret_store falls back to)."""
        opened.append(MemorySecretStore() if not opened else keyring)
        return opened[-1]

    targets = DestinationTargets(paths, open_store)
    run_worker(db, targets, lambda: len(httpserver.log) == 1)
    assert len(opened) == 2 and [(d, s) for d, s, _ in _deliveries(db)] == [("ops", "delivered")]


def test_the_relay_says_once_that_a_destination_waits_for_its_url_and_when_it_is_read_again(tmp_path):
    notes: list[str] = []
    profile = make_destination("ops", "json://127.0.0.1:9/hook")
    paths = AppPaths.resolve(str(tmp_path))
    team = TeamAlerts("acme", paths, None, None, ["ops"], MemorySecretStore, notes.append)  # type: ignore[arg-type]
    waiting = {"ops": Target(profile, "", profile.fingerprint, GONE)}
    team._say_unreadable(waiting)
    team._say_unreadable(waiting)
    team._say_unreadable({"ops": Target(profile, "json://127.0.0.1:9/hook", profile.fingerprint)})
    assert notes == [
        f"destination ops: {GONE}; its alerts wait until it can be read",
        "destination ops: its URL is read again; delivering",
    ]


@pytest.mark.expect_warning_logs
def test_a_missing_keyring_is_looked_for_again_without_its_notice_each_time(tmp_path, monkeypatch, caplog):
    """`stream` and the relay look for a keyring again while a destination waits for its URL; the keyring's
    notice (and its unlock prompt, for a locked one) is for the first look only, not one every few seconds."""
    monkeypatch.setattr(deliveries_module, "REREAD_S", 0.0)  # every call reads again

    class KeptInMemory(KeyringBackend):
        """A keyring that answers (the keyring library's backend seam): the one the user set up meanwhile."""

        priority = 1  # type: ignore[assignment]

        def get_password(self, service, username):
            return None

        def set_password(self, service, username, password):
            raise AssertionError("not written here")

        def delete_password(self, service, username):
            raise AssertionError("not written here")

    paths = _destination(tmp_path, "json://127.0.0.1:9/hook", MemorySecretStore())
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        targets = DestinationTargets(paths, keyring_opener())
        for _ in range(4):
            assert targets()["ops"].problem == (
                "its URL cannot be read: no system keyring answered — unlock or start the system keyring"
            )
        keyring.set_keyring(KeptInMemory())  # one appears: the next look opens it (the URL is not in it)
        assert "its URL is not in the keyring" in targets()["ops"].problem
    finally:
        keyring.set_keyring(previous)
        KeyringBackend._classes.discard(KeptInMemory)  # never a backend the library picks later
    notices = [r for r in caplog.records if "Sign-in will last only while the app runs" in r.getMessage()]
    assert len(notices) == 1, [r.getMessage() for r in notices]


@pytest.mark.expect_warning_logs
def test_a_destination_whose_url_is_never_read_holds_back_no_other(tmp_path, httpserver):
    """One destination's URL is gone from the keyring for good (another computer's settings): its alerts wait,
    and another destination's go out all the same."""
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    keyring = FlakyKeyring()
    keyring.answers = True
    paths = _destination(tmp_path, f"json://127.0.0.1:{httpserver.port}/hook", keyring)
    with edited_settings(paths) as settings:  # listed first: its deliveries come first in every page
        settings.destinations = [make_destination("lost", "json://127.0.0.1:9/gone"), *settings.destinations]
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write() for _ in range(3)])
    targets = DestinationTargets(paths, lambda: keyring)
    run_worker(db, targets, lambda: len(httpserver.log) == 3)
    states = sorted({(d, s) for d, s, _ in _deliveries(db)})
    assert states == [("lost", "pending"), ("ops", "delivered")]
    assert "its URL is not in the keyring" in targets.problems["lost"]
