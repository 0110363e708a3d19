"""Several processes opening one new database at the same moment (the app and a CLI command started together, two
`stream`s on one profile): each open succeeds, the schema is made once, and no process takes the file another is
making for someone else's and moves it aside."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
from pathlib import Path
from typing import Any

from tenant_events.store.schema import SCHEMA_VERSION

PROCESSES = 3
ROUNDS = 12


def _open_each(paths: list[str], barrier: Any, outcomes: Any) -> None:
    from tenant_events.store.database_open import open_database

    for path in paths:
        barrier.wait(30)
        try:
            conn, notice = open_database(Path(path))
            conn.close()
            outcomes.put("moved aside" if notice is not None else "ok")
        except Exception as exc:  # every failure is reported, whatever it is
            outcomes.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_one_new_file_at_once_all_get_it(tmp_path):
    paths = [str(tmp_path / f"round{n}" / "tenant.sqlite3") for n in range(ROUNDS)]
    spawn = mp.get_context("spawn")  # (no fork of a process that runs threads)
    barrier, outcomes = spawn.Barrier(PROCESSES), spawn.Queue()
    children = [spawn.Process(target=_open_each, args=(paths, barrier, outcomes)) for _ in range(PROCESSES)]
    for child in children:
        child.start()
    results = [outcomes.get(timeout=120) for _ in range(PROCESSES * ROUNDS)]
    for child in children:
        child.join(30)
        assert child.exitcode == 0
    failed = [r for r in results if r != "ok"]
    assert not failed, f"{len(failed)} of {len(results)} opens failed: {sorted(set(failed))[:5]}"
    for path in paths:
        assert [p.name for p in Path(path).parent.glob("*corrupt*")] == []
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            conn.close()
