"""`tenant-events stream` on a run that has never reached the server gives up after a stated time (exit 6, one
line naming the host and the cause); once a stream has been open, losing the network is retried as long as
it lasts. Real subprocesses against a closed port, an unresolvable name, a plain-HTTP server spoken to over
TLS, and the real simulator."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

from helpers.fixtures_engine import OLD, cli
from helpers.slack import bound
from tenant_events.store import EventReader

TE = [sys.executable, "-m", "tenant_events"]
ENV = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "unused-token"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stream(base_url: str, data, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = subprocess.run(
        [*TE, "stream", "--base-url", base_url, "--data-dir", str(data), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    return proc, time.monotonic() - started


def _last_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err, err
    return lines[-1]


def test_help_states_the_time_limit():
    out = subprocess.run([*TE, "stream", "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "--unreachable-timeout" in out and "default 20" in out


def test_connection_refused_gives_up_with_exit_6(tmp_path):
    port = _closed_port()
    proc, took = _stream(f"http://127.0.0.1:{port}/api/v2", tmp_path, "--unreachable-timeout", "3")
    assert proc.returncode == 6, proc.stderr
    line = _last_line(proc.stderr)
    assert line.startswith(f"tenant-events: cannot reach 127.0.0.1:{port}: connection refused"), line
    assert "gave up after 3 s" in line
    assert 2.5 < took < 20


def test_unresolvable_host_gives_up_after_the_default_time(tmp_path):
    proc, took = _stream("https://nonexistent.invalid/api/v2", tmp_path)
    assert proc.returncode == 6, proc.stderr
    line = _last_line(proc.stderr)
    assert line.startswith(
        "tenant-events: cannot reach nonexistent.invalid: the name nonexistent.invalid does not resolve (DNS"
    ), line
    assert "gave up after 20 s" in line
    assert 19 < took < 45


def test_tls_to_a_plain_http_server_gives_up_with_exit_6(simulator, tmp_path):
    host_port = simulator.auth_url.removeprefix("http://")
    proc, _took = _stream(f"https://{host_port}/api/v2", tmp_path, "--unreachable-timeout", "3")
    assert proc.returncode == 6, proc.stderr
    line = _last_line(proc.stderr)
    assert line.startswith(f"tenant-events: cannot reach {host_port}: the TLS handshake failed"), line


def test_network_loss_after_the_stream_was_open_is_retried(make_simulator, tmp_path):
    sim = make_simulator(backlog=20, heartbeat=0.2)
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    proc = cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--data-dir",
        str(tmp_path),
        "--name",
        "demo",
        "--from-timestamp",
        OLD,
        "--unreachable-timeout",
        "2",
        env=env,
    )
    db = tmp_path / "tenants" / "demo.sqlite3"
    try:
        deadline = time.monotonic() + bound(30)
        stored = 0
        while stored < 20:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the backlog was not stored within 30 s"
            if db.exists():
                # the other process may still be creating its schema
                with contextlib.suppress(sqlite3.OperationalError), EventReader(db) as reader:
                    stored = reader.count()
            time.sleep(0.1)  # polling another process's database
        sim.stop()  # the server goes away: connection refused from now on
        time.sleep(6)  # three times the limit for a server never reached
        assert proc.poll() is None, "it gave up on a server it had reached before"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "cannot reach" not in err


def test_waiting_for_another_process_refreshing_the_sign_in_is_not_unreachable():
    """The server was not asked yet: another process of the data dir holds the sign-in's refresh lock. That is
    no verdict on the server, so the first-contact timer does not give up on it (the stream waits and retries)."""
    import asyncio

    from tenant_events.cli.first_contact import FirstContact
    from tenant_events.values.stream_states import StateChange, StreamState

    stopped: list[bool] = []
    contact = FirstContact("http://127.0.0.1:9/api/v2", 0.05, lambda: stopped.append(True))
    contact.observe(StateChange(StreamState.RECONNECTING, "waiting for another process", "sign_in_busy"))
    asyncio.run(contact.watch())
    assert not stopped and contact.error is None
