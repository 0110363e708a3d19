"""Receivers that try to hold the sender (tests/helpers/hostile_receivers.py) or to pull secrets out of it:

- one that trickles its answer a byte at a time: a second alert still reaches the healthy destination within
  2 s, the attempt ends at its deadline (an e-mail's too, against an SMTP server whose greeting never ends), `destinations test` answers within it, and `stream` exits within
  5 s of SIGINT or SIGTERM (the send left pending for the next start);
- one that redirects: the redirect is not followed (its secret header never reaches the other host) and the
  destination stops with the reason;
- one that answers 200 MB: a few KB of it are read, not the whole.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
import uuid

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from helpers.deliveries import alert_write, store_alerts, target
from helpers.fixtures_engine import cli
from helpers.hostile_receivers import Flood, SmtpTrickler, Trickler, running
from helpers.slack import bound
from helpers.stream_kill import wait
from tenant_events.destinations.message import test_message as probe
from tenant_events.destinations.send import DEADLINE_S, Outcome, send
from tenant_events.destinations.worker import DeliveryWorker
from tenant_events.store.outbox import read_status

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
needs_keyring = pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)")


def test_a_trickling_receiver_holds_back_no_other_destination_and_not_the_stop(tmp_path, httpserver):
    arrived: list[float] = []
    httpserver.expect_request("/ok", method="POST").respond_with_handler(
        lambda request: arrived.append(time.monotonic()) or Response("ok")
    )
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write("first-rule")])
    with running(Trickler()) as slow:
        targets = {
            "slow": target("slow", f"json://127.0.0.1:{slow.port}/hook"),
            "ok": target("ok", f"json://127.0.0.1:{httpserver.port}/ok"),
        }

        async def main() -> tuple[float, float]:
            worker = DeliveryWorker(db, lambda: targets)
            task = asyncio.create_task(worker.run())
            try:
                await _until(lambda: len(arrived) == 1 and slow.requests == 1, worker)
                second_at = time.monotonic()
                store_alerts(db, [alert_write("second-rule")])  # raised while the slow send hangs
                worker.kick()
                await _until(lambda: len(arrived) == 2, worker)
                stopping = time.monotonic()
                await worker.close()
                await task
                return arrived[1] - second_at, time.monotonic() - stopping
            finally:
                slow.close()  # (a sender that never ends its attempt would hold the test's exit)
                await worker.close()
                await task

        second, stop = asyncio.run(main())
    print(f"second alert to the healthy destination after {second:.2f} s; the worker stopped in {stop:.2f} s")
    assert second < 2.0, f"the second alert reached the healthy destination after {second:.1f} s"
    assert stop < 5.0, f"the worker took {stop:.1f} s to stop"
    slow_status = next(s for s in read_status(db) if s.name == "slow")
    assert slow_status.pending == 2  # nothing lost: both go to the slow one on the next start


async def _until(check, worker: DeliveryWorker, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "timed out"
        worker.kick()
        await asyncio.sleep(0.02)


def test_an_attempt_ends_at_its_deadline_however_the_answer_trickles():
    with running(Trickler(every=0.2)) as slow:
        started = time.monotonic()
        outcome = send(f"json://127.0.0.1:{slow.port}/hook", probe("slow"), deadline=1.5)
        took = time.monotonic() - started
    assert outcome.kind == "retry" and outcome.reason == "no complete answer within 1.5 s", outcome
    assert 1.4 < took < 4.0, took


def test_an_email_attempt_ends_at_its_deadline_however_the_server_trickles():
    """E-mail goes through smtplib, not requests: its socket is the attempt's too, shut at the deadline."""
    outcomes: list[Outcome] = []
    with socket.create_server(("127.0.0.1", 0)) as closed:
        nobody = closed.getsockname()[1]
    # the e-mail path loaded once first (a refused attempt): on a loaded machine, loading it took the whole 1.5 s
    # of the timed attempt below, which then never reached the server
    send(
        f"mailto://127.0.0.1:{nobody}?from=alerts@example.com&to=oncall@example.com",
        probe("mail"),
        deadline=30,
    )
    with running(SmtpTrickler()) as slow:
        url = f"mailto://127.0.0.1:{slow.port}?from=alerts@example.com&to=oncall@example.com"
        started = time.monotonic()
        sender = threading.Thread(target=lambda: outcomes.append(send(url, probe("mail"), deadline=1.5)))
        sender.start()
        sender.join(timeout=30)  # (bounded: without the deadline it reads the greeting for ever)
        took = time.monotonic() - started
    sender.join(timeout=30)  # the trickler closed: a send still running ends now
    assert slow.requests == 1
    assert took < bound(4.0), f"the e-mail attempt was still running {took:.1f} s into a 1.5 s deadline"
    assert outcomes == [Outcome("retry", "no complete answer within 1.5 s")], outcomes


@needs_keyring
@pytest.mark.dbus
def test_destinations_test_of_a_trickling_receiver_answers_within_the_deadline(tmp_path):
    name = f"slow-{uuid.uuid4().hex[:8]}"
    with running(Trickler()) as slow:
        add = cli("destinations", "add", name, "--data-dir", str(tmp_path), stdin=-1)
        add.communicate(f"json://127.0.0.1:{slow.port}/hook\n", timeout=60)
        try:
            proc = cli("destinations", "test", name, "--data-dir", str(tmp_path))
            _, err = proc.communicate(timeout=60)
            ended = time.monotonic()
        finally:
            cli("destinations", "remove", name, "--data-dir", str(tmp_path)).communicate(timeout=60)
    assert slow.first_request_at is not None, err
    took = ended - slow.first_request_at  # (not the start: a loaded machine takes seconds to start a process)
    print(f"destinations test answered {took:.1f} s after its request reached the receiver")
    assert took < 25.0, took
    assert proc.returncode == 6, err
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            f"tenant-events: destination {name}: test alert not delivered: no complete answer within 20 s"
        )
    ), err


@needs_keyring
@pytest.mark.dbus
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stream_exits_within_5_s_while_a_send_trickles(make_simulator, tmp_path, sig):
    from tenant_events.destinations.registry import make_destination, remove_destination, save_destination
    from tenant_events.paths import AppPaths
    from tenant_events.settings import load_settings, save_settings
    from tenant_events.tenant.sign_in import open_secret_store

    name = f"slow-{uuid.uuid4().hex[:8]}"
    paths = AppPaths.resolve(tmp_path).ensure()
    store = open_secret_store().store
    with running(Trickler()) as slow:
        url = f"json://127.0.0.1:{slow.port}/hook"
        save_destination(paths, store, make_destination(name, url, severities=["critical"]), url)
        settings = load_settings(paths)
        settings.alerts.rules = [
            {"id": "off-hours", "enabled": False},
            {"id": "each-group", "name": "Group", "types": ["group.created"], "severity": "critical"},
        ]
        save_settings(paths, settings)
        try:
            sim = make_simulator(heartbeat=0.2)
            env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
            proc = cli(
                "stream", "--base-url", sim.base_url, "--name", "demo", "--data-dir", str(tmp_path), env=env
            )
            wait(lambda: sim.stats()["connections"] == 1, "connected", proc)
            sim.emit(1, ["group.created"])
            wait(lambda: slow.requests == 1, "the send to the trickling receiver", proc)
            time.sleep(0.5)  # well into the trickle
            started = time.monotonic()
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - started
        finally:
            remove_destination(paths, store, name)
    print(f"stream exited {took:.2f} s after {sig.name}")
    # 1.5 s on a quiet machine; 6-9 s were seen with the whole suite's workers on two cores: the bound stretches
    # for load and stays below the send's own 20 s deadline, which a stop that waited for the send would take
    assert took < min(bound(5.0), DEADLINE_S), f"stream exited {took:.1f} s after {sig.name}:\n{err[-2000:]}"
    assert proc.returncode == 0, err
    [status] = read_status(tmp_path / "tenants" / "demo.sqlite3")
    assert status.pending == 1 and status.last_error is None  # kept for the next start, not counted a failure


def test_a_redirect_is_not_followed_and_its_secret_header_stays_home(httpserver):
    stolen: list[Request] = []
    with running(_Elsewhere(stolen)) as elsewhere:
        httpserver.expect_request("/hook", method="POST").respond_with_data(
            "moved", status=307, headers={"Location": f"http://127.0.0.1:{elsewhere.port}/steal"}
        )
        token = "tk-" + uuid.uuid4().hex
        url = f"json://127.0.0.1:{httpserver.port}/hook?+X-Api-Key={token}"
        outcome = send(url, probe("hook"))
    assert stolen == [], "the redirect was followed with the URL's header"
    assert outcome.kind == "stop", outcome
    assert outcome.reason.startswith("HTTP 307 Temporary Redirect: the receiver redirects to 127.0.0.1;")
    assert token not in outcome.reason


class _Elsewhere:
    """Another host's receiver, recording what reaches it."""

    def __init__(self, seen: list[Request]) -> None:
        self._server = HTTPServer(host="127.0.0.1", port=0)
        self._server.expect_request("/steal").respond_with_handler(lambda r: seen.append(r) or Response("ok"))
        self._server.start()
        self.port = self._server.port

    def close(self) -> None:
        self._server.stop()


def test_a_200_mb_answer_is_not_read_whole():
    size = 200 * 1024 * 1024
    with running(Flood(size)) as flood:
        outcome = send(f"json://127.0.0.1:{flood.port}/hook", probe("flood"))
        time.sleep(0.3)  # the server notices the closed connection
        taken = flood.taken
    assert outcome.kind == "delivered", outcome
    assert taken < 32 * 1024 * 1024, f"the sender took {taken / 2**20:.0f} MB of the answer"
