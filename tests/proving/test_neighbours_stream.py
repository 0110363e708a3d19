"""The concurrency matrix beside `tenant-events stream`: every documented command, a second stream and the app run
against the data dir a live stream writes, each to its end and again killed while it holds the database, and
last its -wal and -shm removed by another program (the stream says so and opens the database again); after
each, the stream's store is whole (tests/helpers/neighbours.py says what is looked at). The table of cases is
written to artifacts/neighbours-stream.md."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from helpers.fixtures_engine import OLD, cli
from helpers.neighbours import (
    COMMANDS,
    LONG_RUNNING,
    TENANT,
    Case,
    Writer,
    against_the_log,
    check_store,
    db_of,
    prepare,
    run_neighbour,
    stored_count,
    table,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"


def wait_for(check, limit: float, what: str):
    deadline = time.monotonic() + limit
    while True:
        if value := check():
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:.0f} s for {what}")
        time.sleep(0.05)


@pytest.mark.timeout(900)  # thirty commands one after another: minutes on a loaded machine
def test_every_command_beside_a_live_stream_leaves_its_store_whole(make_simulator, tmp_path):
    sim = make_simulator(seed=7, backlog=300, rate=20.0, heartbeat=0.2, burst_every=0)
    data = tmp_path / "data"
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600)}
    stream_args = ["stream", "--base-url", sim.base_url, "--name", TENANT, "--data-dir", str(data)]
    stream_args += ["--from-timestamp", OLD]
    proc = cli(*stream_args, env=env)
    said: list[str] = []
    assert proc.stderr is not None
    stderr = proc.stderr
    reading = threading.Thread(target=lambda: said.extend(stderr), daemon=True)
    reading.start()
    writer = Writer(proc.pid, data, lambda: "".join(said), stream_args, env)
    db = db_of(data)
    cases: list[Case] = []
    try:
        wait_for(lambda: stored_count(db) >= 300, 120, "the backlog stored")
        fill = prepare(writer, tmp_path, wait_for)
        for killed in (False, True):
            for name in [*COMMANDS, *LONG_RUNNING]:
                case = Case(name, killed, stored_before=stored_count(db))
                output = run_neighbour(case, writer, tmp_path, fill)
                check_store(case, writer, output, wait_for)
                if proc.poll() is not None:
                    case.problems.append(f"the stream ended (exit {proc.returncode})")
                cases.append(case)
                if proc.poll() is not None:
                    break
        if (
            proc.poll() is None
        ):  # last, another program removes the log under the stream: it says so, recovers
            case = Case("rm -wal -shm", False, stored_before=stored_count(db))
            for suffix in ("-wal", "-shm"):
                os.remove(db.with_name(db.name + suffix))
            wait_for(
                lambda: "removed or replaced by another program" in "".join(said), 60, "the stream saying so"
            )
            check_store(case, writer, "", wait_for)
            cases.append(case)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        reading.join(10)
        ARTIFACTS.mkdir(exist_ok=True)
        against_the_log(cases, sim)
        (ARTIFACTS / "neighbours-stream.md").write_text(table(cases) + "\n", encoding="utf-8")
    assert proc.returncode == 0, "".join(said[-20:])
    assert not [c for c in cases if c.problems], table(cases)
    assert len(cases) == 2 * (len(COMMANDS) + len(LONG_RUNNING)) + 1
    # Killed mid-command: those that hold the database a while are caught holding it (the quickest may end first;
    # rules test and import, destinations test never open it).
    killed_holding = {c.name for c in cases if c.killed and c.held_db}
    assert {"export", "reindex", "second-stream"} <= killed_holding and len(killed_holding) >= 6, table(cases)
