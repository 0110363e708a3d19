"""Crash safety (no event lost, none twice): the CLI SIGKILLed at random moments and restarted, and SIGSTOPped for
longer than its stall timeout, while the simulator rotates connections and re-sends duplicates. Afterwards the
export holds every event exactly once, in the stream's order.

Default run: 20 kill rounds. `CHAOS_ROUNDS=200 pytest tests/chaos -m slow` runs the long variant.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import orjson
import pytest

from helpers.fixtures_engine import OLD, cli, reference_ids
from helpers.slack import bound
from tenant_events.store import EventReader


def stored_count(db) -> int:
    if not db.exists():
        return 0
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:
        return 0


def export_ids(data_dir) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--data-dir", str(data_dir), "--jsonl", "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return [orjson.loads(line)["event"]["id"] for line in out.splitlines()]


def start(sim, data_dir) -> subprocess.Popen[str]:
    # --from-timestamp only applies while no cursor is stored (a round killed during start-up stored none).
    args = [
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "chaos",
        "--data-dir",
        str(data_dir),
        "--stall-timeout",
        "1.0",
        "--from-timestamp",
        OLD,
    ]
    return cli(*args, env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600)})


def wait_connected(proc) -> None:
    """Block until the CLI reports it is reading the stream (its signal handlers are in place by then)."""
    for line in proc.stderr:
        if line.startswith(("tenant-events: live", "tenant-events: catching up")):
            return
    raise AssertionError(f"stream exited {proc.wait()} before connecting")


def finish(sim, data_dir, db, total: int) -> None:
    # the last start runs against a server that keeps connections long enough to count as steady: connections
    # ended within a second make progress without resetting the reconnect backoff, and on a loaded machine its
    # waits grew past the bound below (that backoff guards against a server that keeps hanging up at once)
    sim.faults(rotate_after=6.0)
    proc = start(sim, data_dir)
    wait_connected(proc)
    deadline = time.monotonic() + bound(60)
    while stored_count(db) < total and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.25)  # (each look opens a reader: not so often that looking slows the catch-up)
    stored = stored_count(db)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=bound(30))
    assert proc.returncode == 0, err
    # a store that never reaches the total has lost events; one still catching up is told apart from it
    said = "".join(err.splitlines(keepends=True)[-30:])
    assert stored >= total, (
        f"{stored} of {total} events stored {bound(60):.0f} s after the last start:\n{said}"
    )


def run_kill_rounds(sim, tmp_path, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    db = tmp_path / "tenants" / "chaos.sqlite3"
    for _ in range(rounds):
        proc = start(sim, tmp_path)
        sim.emit(rng.randint(20, 120))
        time.sleep(rng.uniform(0.4, 1.4))  # interpreter start ≈ 0.3 s: kills land in start-up, catch-up, live
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=10)
        assert proc.returncode == -signal.SIGKILL
    total = int(sim.stats()["events"])
    finish(sim, tmp_path, db, total)
    ids = export_ids(tmp_path)
    assert len(ids) == len(set(ids)), "an event was stored twice"
    assert ids == reference_ids(sim, total), "events lost or out of order"


SIM = {"backlog": 3000, "heartbeat": 0.1, "rotate_after": 0.7, "rate": 0, "burst_every": 0}


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
def test_sigkill_rounds_keep_every_event_exactly_once_in_order(make_simulator, tmp_path):
    sim = make_simulator(**SIM)
    sim.faults(duplicate_every=9)
    run_kill_rounds(sim, tmp_path, rounds=20, seed=5)


@pytest.mark.slow
def test_many_sigkill_rounds(make_simulator, tmp_path, request):
    if "slow" not in (request.config.getoption("-m") or "") and not os.environ.get("CHAOS_ROUNDS"):
        pytest.skip("long variant: run with -m slow or CHAOS_ROUNDS=N")
    sim = make_simulator(**SIM)
    sim.faults(duplicate_every=9)
    run_kill_rounds(sim, tmp_path, rounds=int(os.environ.get("CHAOS_ROUNDS", "100")), seed=11)


def test_sigstop_longer_than_the_stall_timeout_then_sigcont(make_simulator, tmp_path):
    # connections the server ends within a second (SIM) make progress without resetting the reconnect backoff, so
    # on a loaded machine each one brings few events and the waits between them grow to the backoff's cap: here
    # the server keeps a connection long enough to count as steady, and the sleep is what is under test
    sim = make_simulator(**{**SIM, "rotate_after": 6.0})
    sim.faults(duplicate_every=9)
    db = tmp_path / "tenants" / "chaos.sqlite3"
    proc = start(sim, tmp_path)
    wait_connected(proc)
    try:
        deadline = time.monotonic() + bound(30)
        while stored_count(db) < 3000 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGSTOP)
        sim.emit(200)
        time.sleep(3.0)  # a sleeping laptop: three stall timeouts
        sim.emit(100)
        proc.send_signal(signal.SIGCONT)
        total = int(sim.stats()["events"])
        deadline = time.monotonic() + bound(60)
        while stored_count(db) < total and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        sim.emit(50)  # it is live again after waking, not just draining a buffer
        total += 50
        deadline = time.monotonic() + bound(60)
        while stored_count(db) < total and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=bound(30))
    assert proc.returncode == 0, err
    ids = export_ids(tmp_path)
    said = "".join(err.splitlines(keepends=True)[-30:])
    assert len(ids) == len(set(ids)) == total, f"{len(ids)} of {total} stored; the command said:\n{said}"
    assert ids == reference_ids(sim, total)
