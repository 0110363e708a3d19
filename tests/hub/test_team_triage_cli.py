"""`tenant-events triage` on a team alert is the team's, as the inbox's buttons are: written to the hub under the
viewer's hub user, so the relay delivers the resolve (saying who and why) and every teammate sees it. With the
hub out of reach, nothing changes, and the command says so in one line. Real nats-server, relays and a viewer
started from a saved hub profile (its secret in the real keyring), a real JSON webhook."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from helpers.hub_cli import HubCli
from helpers.nats_hub import free_port
from helpers.team_alerts import team_ids, two_relays, wait_until, with_rules
from tenant_events.auth.secret_store import open_secret_store
from tenant_events.hub.credentials import add_hub_profile, remove_hub_profile
from tenant_events.paths import AppPaths
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.url_forms import team_alert_link

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", *args], capture_output=True, text=True, timeout=120
    )


def _profile(paths: AppPaths, hub, name: str, urls: list[str]) -> None:
    add_hub_profile(
        paths,
        open_secret_store().store,
        hub.credentials.viewer,
        name=name,
        hub_urls=urls,
        hub_tenant="acme",
        auth="password",
        user="viewer",
    )


def test_a_resolve_from_the_command_line_reaches_the_team_and_its_destination(
    make_simulator, nats_single, tmp_path, httpserver
):
    hub = nats_single
    data = tmp_path / "viewer"
    paths = AppPaths.resolve(str(data)).ensure()
    with_rules(data)
    name = f"acme-{uuid.uuid4().hex[:6]}"
    _profile(paths, hub, name, hub.urls.split(","))
    db = paths.database_file(name)
    try:
        with two_relays(make_simulator, hub, tmp_path, httpserver) as (sim, receiver, _dirs, relays):
            watching = HubCli("stream", "--tenant", name, "--data-dir", str(data), env={})
            try:
                watching.wait_for("showing the team's alerts")
                sim.emit(1, ["group.created"])
                wait_until(lambda: len(receiver.keys) >= 1, "the firing", relays)
                wait_until(lambda: len(team_ids(db)) >= 1, "the viewer's copy", [*relays, watching])
            finally:
                watching.stop()
            with AlertInbox(db) as inbox:
                [mine] = inbox.alerts()

            # the hub out of reach (the profile pointed elsewhere): one line, exit 6, nothing changed here
            remove_hub_profile(paths, open_secret_store().store, name)
            _profile(paths, hub, name, [f"nats://127.0.0.1:{free_port()}"])
            away = _cli(
                "triage", "resolve", str(mine.id), "--tenant", name, "--note", "x", "--data-dir", str(data)
            )
            assert away.returncode == 6, away.stderr
            lines = away.stderr.strip().splitlines()
            assert len(lines) == 1 and "cannot be reached" in lines[0] and "nothing changed" in lines[0], (
                lines
            )
            with AlertTriage(db) as triage:
                assert triage.history(mine.id) == []

            remove_hub_profile(paths, open_secret_store().store, name)
            _profile(paths, hub, name, hub.urls.split(","))
            done = _cli(
                "triage",
                "resolve",
                str(mine.id),
                "--tenant",
                name,
                "--note",
                "a drill",
                "--data-dir",
                str(data),
            )
            assert done.returncode == 0, done.stderr
            assert (
                f"{name} alert {mine.id}: resolved by viewer " in done.stdout
            )  # the hub user: the team's word
            wait_until(
                lambda: any(b.get("status") == "resolved" for b in receiver.bodies), "the resolve", relays
            )
    finally:
        remove_hub_profile(paths, open_secret_store().store, name)
    key = f"each-group.{mine.first_event_id}"
    resolved = next(b for b in receiver.bodies if b.get("status") == "resolved")
    said = str(resolved["message"])
    assert f" · by viewer — a drill · {team_alert_link('acme', key)}" in said, said
    with AlertTriage(db) as triage:
        assert [(t.state, t.by, t.note) for t in triage.history(mine.id)] == [
            ("resolved", "viewer", "a drill")
        ]
