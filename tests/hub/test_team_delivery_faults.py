"""The team path's delivery faults, end to end: a relay with --alerts-to a JSON webhook (pytest-httpserver through
Apprise, its password in the real keyring) on a nats-server. The receiver answers 500 three times then 200; is
down for 30 s; is slow (5 s); answers 401. Every alert is delivered under one dedup key and none is lost; a 401
stops the destination with its reason in `destinations list` and the relay's output; the destination's password is nowhere in the
relay's data dir (settings, databases, logs). A relay that cannot read the destination's URL (no keyring answers it)
says so and keeps the alerts pending for it, never routed to no destination."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from werkzeug import Request, Response

from helpers.hub_cli import relay as hub_relay
from helpers.team_alerts import relay, team_destination, wait_until

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
SECRET = "Hook-Passw0rd-4d1c9e"


class FaultyReceiver:
    """A JSON webhook answering `answers` in turn (then 200), each after `delay` seconds; it records each
    request's dedup key and the status it got."""

    def __init__(self, httpserver, answers: list[int] | None = None, delay: float = 0.0) -> None:
        self.answers = list(answers or [])
        self.delay = delay
        self.requests: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        httpserver.expect_request("/hook", method="POST").respond_with_handler(self._answer)
        self.url = f"json://hook:{SECRET}@127.0.0.1:{httpserver.port}/hook"

    def _answer(self, request: Request) -> Response:
        time.sleep(self.delay)
        with self._lock:
            status = self.answers.pop(0) if self.answers else 200
            self.requests.append((request.headers["Idempotency-Key"], status))
        return Response("ok" if status == 200 else "no", status=status)

    def delivered(self) -> list[str]:
        with self._lock:
            return [key for key, status in self.requests if status == 200]

    def statuses(self) -> list[int]:
        with self._lock:
            return [status for _, status in self.requests]


def _no_secret(data: Path) -> None:
    """The destination's password is in no file of the data dir (the keyring holds it)."""
    for path in data.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def _run(
    make_simulator, hub, tmp_path, receiver: FaultyReceiver, groups: int, until, what: str, timeout: float
):
    """A relay delivering `groups` alerts to `receiver` until `until()`; returns its output and data dir."""
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    data = tmp_path / "relay"
    with team_destination([data], receiver.url) as name:
        proc = relay(sim, hub, token, data, name)
        try:
            proc.wait_for("alerts: evaluating the team's alerts")
            sim.emit(groups, ["group.created"])
            wait_until(until, what, [proc], timeout=timeout)
        finally:
            code = proc.stop()
    assert code == 0, proc.text()
    return proc.text(), data


def test_a_receiver_answering_500_three_times_gets_the_alert_once_under_one_key(
    make_simulator, nats_single, tmp_path, httpserver
):
    receiver = FaultyReceiver(httpserver, [500, 500, 500])
    _, data = _run(
        make_simulator,
        nats_single,
        tmp_path,
        receiver,
        1,
        lambda: receiver.delivered(),
        "the delivery after three 500s",
        90,
    )
    assert receiver.statuses() == [500, 500, 500, 200]
    assert len({key for key, _ in receiver.requests}) == 1  # the retries carry the same dedup key
    _no_secret(data)


@pytest.mark.expect_warning_logs  # the relay's deliveries fail while the receiver is down
def test_a_receiver_down_for_30_s_gets_every_alert_when_it_is_back(
    make_simulator, nats_single, tmp_path, httpserver
):
    receiver = FaultyReceiver(httpserver)
    httpserver.stop()
    down = time.monotonic()
    back = threading.Timer(30.0, httpserver.start)
    back.start()
    try:
        _run(
            make_simulator,
            nats_single,
            tmp_path,
            receiver,
            3,
            lambda: len(set(receiver.delivered())) >= 3,
            "every alert after the receiver came back",
            150,
        )
    finally:
        back.cancel()
        back.join()
        if not httpserver.is_running():
            httpserver.start()
    assert time.monotonic() - down >= 30.0
    keys = receiver.delivered()
    assert len(set(keys)) == 3 and len(keys) == 3, keys  # none lost, none twice
    print(f"delivered {time.monotonic() - down - 30.0:.1f} s after the receiver came back")


def test_a_slow_receiver_5_s_gets_every_alert_once(make_simulator, nats_single, tmp_path, httpserver):
    receiver = FaultyReceiver(httpserver, delay=5.0)
    _run(
        make_simulator,
        nats_single,
        tmp_path,
        receiver,
        2,
        lambda: len(set(receiver.delivered())) >= 2,
        "both slow deliveries",
        90,
    )
    keys = receiver.delivered()
    assert len(set(keys)) == 2 and len(keys) == 2, keys  # a 5 s answer is no timeout: not sent again


@pytest.mark.expect_warning_logs  # the relay logs the stopped destination
def test_a_401_stops_the_destination_with_its_reason_in_destinations_list(
    make_simulator, nats_single, tmp_path, httpserver
):
    receiver = FaultyReceiver(httpserver, [401] * 50)
    data = tmp_path / "relay"

    def listed() -> str:
        out = subprocess.run(
            [sys.executable, "-m", "tenant_events", "destinations", "list", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return out.stdout

    output, _ = _run(
        make_simulator,
        nats_single,
        tmp_path,
        receiver,
        2,
        lambda: "STOPPED" in listed(),
        "the destination stopped",
        60,
    )
    said = [line for line in output.splitlines() if "alerts: destination team-" in line]
    assert len(said) == 1 and "stopped: " in said[0] and "401" in said[0], output  # the relay says it, once
    assert SECRET not in output
    text = listed()
    stopped = [line for line in text.splitlines() if "STOPPED" in line]
    assert len(stopped) == 1 and "acme-team:" in stopped[0] and "401" in stopped[0], text
    assert "pending" in stopped[0], text  # kept, not dropped: a new URL sends them
    assert receiver.statuses() == [401], receiver.requests  # stopped at the first: no retries into a 401
    assert SECRET not in text
    _no_secret(data)


def _pending(db: Path) -> list[tuple[str, str | None]]:
    """(destination, last error) of each delivery still pending in a relay's team database."""
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
    try:
        return conn.execute(
            "SELECT destination, last_error FROM alert_deliveries WHERE state = 'pending'"
        ).fetchall()
    except sqlite3.Error:  # being created
        return []
    finally:
        conn.close()


def test_a_relay_that_cannot_read_the_destinations_url_says_so_and_keeps_its_alerts_pending(
    make_simulator, nats_single, tmp_path, httpserver
):
    receiver = FaultyReceiver(httpserver)
    sim = make_simulator(heartbeat=0.2, rate=0)
    token = sim.mint_token(ttl=3600)
    data = tmp_path / "relay"
    db = data / "tenants" / "acme-team.sqlite3"
    with team_destination([data], receiver.url) as name:
        # no keyring answers this relay (as when its daemon is gone): the URL saved in the keyring cannot be read
        unreadable = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
        proc = hub_relay(sim, nats_single, token, data, alerts_to=name, env=unreadable)
        try:
            proc.wait_for("alerts: evaluating the team's alerts")
            sim.emit(2, ["group.created"])
            proc.wait_for(f"alerts: destination {name}: its URL cannot be read", timeout=60)
            # routed to it, then waiting with the reason (set by the delivery worker's pass after the routing)
            wait_until(
                lambda: [(d, "cannot be read" in (e or "")) for d, e in _pending(db)] == [(name, True)] * 2,
                "both alerts pending for the destination, with the reason",
                [proc],
            )
        finally:
            code = proc.stop()
    assert code == 0, proc.text()
    assert {(d, "cannot be read" in (e or "")) for d, e in _pending(db)} == {(name, True)}
    assert receiver.requests == []
