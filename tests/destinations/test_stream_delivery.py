"""`tenant-events stream` delivers what it stores, and a SIGKILL in the middle of the outbox loses nothing: the next
start resumes it and every alert reaches the receiver under one dedup key (only the delivery in flight at the kill
may arrive twice, with the same key). No secret of the destination is anywhere in the data dir afterwards."""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
import uuid

import pytest
from werkzeug import Request, Response

from helpers.fixtures_engine import cli
from helpers.stream_kill import wait
from tenant_events.destinations.registry import make_destination, save_destination, slot
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings, save_settings
from tenant_events.tenant.sign_in import open_secret_store

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]
ALERTS = 12


def _wait(check, what, proc, timeout=60.0):
    wait(check, what, proc, timeout)


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
def test_sigkill_mid_outbox_resumes_and_each_alert_arrives_under_one_key(
    make_simulator, tmp_path, httpserver
):
    keys: list[str] = []
    lock = threading.Lock()

    def slow_receiver(request: Request) -> Response:
        time.sleep(0.3)  # the outbox drains slowly enough to be killed in the middle
        with lock:
            keys.append(request.headers["Idempotency-Key"])
        return Response("ok")

    httpserver.expect_request("/hook/secret-path", method="POST").respond_with_handler(slow_receiver)
    token = "tk-" + uuid.uuid4().hex
    url = f"json://127.0.0.1:{httpserver.port}/hook/secret-path?+Authorization=Bearer%20{token}"
    name = f"crash-{uuid.uuid4().hex[:8]}"
    paths = AppPaths.resolve(tmp_path).ensure()
    store = open_secret_store().store
    save_destination(paths, store, make_destination(name, url, severities=["critical"]), url)
    settings = load_settings(paths)
    settings.alerts.rules = [
        {"id": "off-hours", "enabled": False},
        {
            "id": "each-group",
            "name": "Group created",
            "types": ["group.created"],
            "severity": "critical",
            "coalesce_minutes": 0,
        },
    ]
    save_settings(paths, settings)
    try:
        sim = make_simulator(heartbeat=0.2)
        env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
        args = ("stream", "--base-url", sim.base_url, "--name", "demo", "--data-dir", str(tmp_path))
        first = cli(*args, env=env)
        _wait(lambda: sim.stats()["connections"] == 1, "connected", first)
        sim.emit(ALERTS, ["group.created"])
        _wait(lambda: len(keys) >= 3, "the first deliveries", first)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        assert len(keys) < ALERTS, "the kill came after every delivery: nothing was tested"

        second = cli(*args, env=env)
        _wait(lambda: len(set(keys)) >= ALERTS, "every alert delivered", second)
        time.sleep(0.5)  # nothing more arrives
        second.send_signal(signal.SIGTERM)
        _, err = second.communicate(timeout=30)
        assert second.returncode == 0, err
    finally:
        store.delete(slot(paths, name))
    assert sorted(set(keys)) == sorted(f"tenant-events:demo:{i}:1" for i in range(1, ALERTS + 1))
    repeats = {k: n for k, n in collections.Counter(keys).items() if n > 1}
    assert sum(repeats.values()) - len(repeats) <= 1, repeats  # at most the one in flight at the kill
    # the URL's secrets are in no file of the data dir: settings, logs, databases, crash reports
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".log" or "log" in p.name for p in files)
    for path in files:
        data = path.read_bytes()
        assert token.encode() not in data and b"secret-path" not in data, path
