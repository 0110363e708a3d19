"""`tenant-events stream` killed while it evaluates a backlog, then restarted: the waits and counters the
exactly-once tests share (tests/cli/test_alerts_cli.py, test_correlation_exactly_once.py)."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from helpers.fixtures_engine import OLD, CliProcess, demo_stream
from helpers.slack import bound
from tenant_events.store import EventReader


def wait(check: Any, what: str, proc: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + bound(timeout)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"stream exited {proc.returncode} before {what}: {proc.stderr.read()}")
        if check():
            return
        time.sleep(0.1)  # (a look opens the database: not so often that looking slows what it waits for)
    raise AssertionError(f"timed out waiting for {what}")


def _scalar(db: Path, sql: str, *args: object) -> int:
    """One integer read from the store read-only; 0 while it is missing, being created or locked."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute(sql, args).fetchone()
        return int(row[0]) if row else 0
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def counter(db: Path, name: str) -> int:
    return _scalar(db, "SELECT value FROM counters WHERE name = ?", name)


def stored(db: Path) -> int:
    with EventReader(db) as reader:
        return reader.count()


def newest_seq(db: Path) -> int:
    """The highest seq the store has given: a resent event takes one too, so it runs ahead of the simulator's."""
    return _scalar(db, "SELECT seq FROM sqlite_sequence WHERE name = 'events'")


def evaluated_all(db: Path, at_least: int) -> bool:
    """At least `at_least` events stored, and the rules' process has evaluated every seq the store has given (it
    follows the store from a process of its own, so it may trail it by a step)."""
    return stored(db) >= at_least and counter(db, "alerts_upto") >= newest_seq(db)


def kill_then_catch_up(sim: Any, data_dir: Path, backlog: int, timeout: float) -> tuple[Path, CliProcess]:
    """Stream `sim`'s backlog into `data_dir`, SIGKILL the stream once the first alerts are committed (before the
    backlog is evaluated), start it again and wait until every event is stored and evaluated; returns the
    database and the running second stream."""
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    db = data_dir / "tenants" / "demo.sqlite3"
    first = demo_stream(sim, data_dir, "--from-timestamp", OLD, env=env)
    try:
        wait(lambda: counter(db, "alerts_upto") > 0, "the first alerts committed", first, timeout=60)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    assert counter(db, "alerts_upto") < backlog, "the kill came after the whole backlog was evaluated"
    second = demo_stream(sim, data_dir, "--from-timestamp", OLD, env=env)
    try:
        wait(
            lambda: evaluated_all(db, backlog),
            "caught up",
            second,
            timeout,
        )
    except BaseException:
        second.kill()  # not left running into the next test of this worker
        second.wait(timeout=10)
        raise
    return db, second
