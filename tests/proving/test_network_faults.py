"""Network and clock faults (proving ground, faults) against the real CLI and the real simulator: every fault knob at
once, the server restarted mid-stream on the same port, and the wall clock jumping forwards and backwards
under the running CLI (libfaketime, per process — the machine's clock is left alone). Each ends with every
event stored exactly once, in the stream's order, and the CLI live again quickly.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.fixtures_engine import OLD, cli, reference_ids
from helpers.slack import bound
from tenant_events.simulator.testing import start_simulator
from tenant_events.store import EventReader

FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")


def count(db: Path) -> int:
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:  # not created yet
        return 0


def wait_count(db: Path, n: int, proc: subprocess.Popen[str], limit: float = 30) -> float:
    """Seconds until `db` holds n events (fails after `limit`, or if the CLI exits)."""
    start = time.monotonic()
    while count(db) < n:
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() - start < bound(limit), (
            f"{count(db)} of {n} stored after {bound(limit):.0f} s"
        )
        time.sleep(0.02)
    return time.monotonic() - start


def stream(sim, data: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "net",
        "--data-dir",
        str(data),
        "--from-timestamp",
        OLD,
        "--stall-timeout",
        "1.0",
        env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600), **(env or {})},
    )


def finish(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return err


def exactly_once_in_order(db: Path, sim, total: int) -> None:
    with EventReader(db) as reader:
        ids = [e.event_id for e, _ in reader.export_iter()]
    assert len(ids) == len(set(ids)) == total, (len(ids), len(set(ids)), total)
    assert ids == reference_ids(sim, total)


def test_every_fault_knob_at_once_loses_nothing_and_keeps_malformed_as_rejected(make_simulator, tmp_path):
    sim = make_simulator(backlog=1500, rate=0, burst_every=0, heartbeat=0.2, rotate_after=0.8)
    db = tmp_path / "tenants" / "net.sqlite3"
    sim.faults(malformed="bad_json", fault_after=20, duplicate_every=7)  # taken by the CLI's first connection
    proc = stream(sim, tmp_path)
    try:
        wait_count(db, 1500, proc)
        knobs = {"drop_mid_frame": 2, "stall": 1, "http_5xx": 2, "http_429": 1}
        sim.faults(fault_after=20, **knobs)
        total, deadline = 1500, time.monotonic() + bound(60)
        while any(sim.faults()[k] for k in knobs):  # each knob fires on a later connection (rotation: 0.8 s)
            assert time.monotonic() < deadline, sim.faults()
            total += sim.emit(50)
            time.sleep(0.3)
        wait_count(db, total, proc, limit=60)
    finally:
        finish(proc)
    sim.emit(100)
    sim.faults(malformed="bad_envelope", fault_after=5)
    proc = stream(sim, tmp_path)
    try:
        wait_count(db, total + 100, proc)
    finally:
        finish(proc)
    exactly_once_in_order(db, sim, int(sim.stats()["events"]))
    with EventReader(db) as reader:
        rejected = reader.rejected()
    assert len(rejected) == 2, [r.reason for r in rejected]  # a frame cut by a drop is never dispatched
    assert all(r.raw and r.reason for r in rejected)


def test_a_server_restart_mid_stream_on_the_same_port(tmp_path):
    options = {"backlog": 1000, "rate": 0, "burst_every": 0, "heartbeat": 0.2, "data_dir": tmp_path / "sim"}
    first = start_simulator(**options)
    port = int(first.auth_url.rsplit(":", 1)[1])
    db = tmp_path / "tenants" / "net.sqlite3"
    proc = stream(first, tmp_path)
    second = None
    try:
        wait_count(db, 1000, proc)
        first.stop()
        time.sleep(1.5)  # the CLI is reconnecting with backoff against a closed port
        second = start_simulator(**{**options, "port": port})  # same signing key and event log (data_dir)
        second.emit(200)
        recovery = wait_count(db, 1200, proc, limit=40)
    finally:
        finish(proc)
        if second is not None:
            second.stop()
        else:
            first.stop()
    assert recovery < 35
    # The restarted server's log continues the old one: verify against it.
    third = start_simulator(**{**options, "port": 0})
    try:
        exactly_once_in_order(db, third, 1200)
    finally:
        third.stop()


@pytest.mark.skipif(not FAKETIME.exists(), reason="libfaketime not installed (apt-get install libfaketime)")
def test_the_wall_clock_jumping_both_ways_under_the_cli(make_simulator, tmp_path):
    sim = make_simulator(backlog=500, rate=0, burst_every=0, heartbeat=0.2, rotate_after=1.0)
    clock = tmp_path / "faketime"
    clock.write_text("+0\n")
    env = {
        "LD_PRELOAD": str(FAKETIME),
        "FAKETIME_TIMESTAMP_FILE": str(clock),
        "FAKETIME_CACHE_DURATION": "0",
        "FAKETIME_NO_CACHE": "1",
        "DONT_FAKE_MONOTONIC": "1",
    }
    db = tmp_path / "tenants" / "net.sqlite3"
    proc = stream(sim, tmp_path, env)
    lags, skews = [], []
    try:
        wait_count(db, 500, proc)
        total = 500
        for jump in ("+3h", "-5h", "+0"):  # forwards (resume after a long suspend), backwards (NTP fix), back
            clock.write_text(jump + "\n")
            time.sleep(0.3)
            sim.emit(100)
            total += 100
            lags.append(wait_count(db, total, proc, limit=20))
            with EventReader(
                db
            ) as reader:  # the CLI really saw the jump: it stamps received_at with its clock
                skews.append(round((reader.page(limit=1)[0].received_at - time.time()) / 3600))
    finally:
        err = finish(proc)
    assert skews == [3, -5, 0], skews
    assert max(lags) < 5.0, (lags, err[-2000:])  # no timer waits out the jump (a 3 h wait would time out)
    exactly_once_in_order(db, sim, total)
