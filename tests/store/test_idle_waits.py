"""The writer's idle work gives way while someone more urgent is behind (the alert rules' process catching up
with a backlog): it then takes one chunk every INDEX_AT_LEAST_EVERY only, and goes on at full pace once they are
done, so the indexing of a catch-up never takes the core the rules need, nor waits for good."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from helpers.entity_events import simulated_rows
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.indexer import FTS_CHUNK


def _indexed(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])


def _until(test, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if test():
            return True
        time.sleep(0.02)
    return test()


def test_indexing_waits_while_told_to_and_goes_on_after(tmp_path, monkeypatch):
    from tenant_events.store import writer as writer_module

    monkeypatch.setattr(writer_module, "IDLE_BEFORE_INDEXING", 0.05)
    monkeypatch.setattr(writer_module, "INDEX_AT_LEAST_EVERY", 3600.0)  # no chunk by the floor in this test
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(3 * FTS_CHUNK)
    behind = [True]
    writer = StoreWriter(path)
    try:
        writer.idle_waits_for.append(lambda: behind[0])
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
        time.sleep(0.6)  # a dozen idle periods
        assert _indexed(path) == 0, "indexed while the rules were behind"
        behind[0] = False
        assert _until(lambda: _indexed(path) == len(rows), 10.0), "not indexed after the rules caught up"
    finally:
        writer.close()


def test_waiting_indexing_still_takes_a_chunk_every_so_often(tmp_path, monkeypatch):
    from tenant_events.store import writer as writer_module

    monkeypatch.setattr(writer_module, "IDLE_BEFORE_INDEXING", 0.05)
    monkeypatch.setattr(writer_module, "INDEX_AT_LEAST_EVERY", 0.1)
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(3 * FTS_CHUNK)
    writer = StoreWriter(path)
    try:
        writer.idle_waits_for.append(lambda: True)  # behind for good: a rules' process that never catches up
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
        assert _until(lambda: _indexed(path) == len(rows), 10.0), "indexing starved"
    finally:
        writer.close()


@pytest.mark.expect_warning_logs
def test_a_failing_test_is_not_waited_for(tmp_path, monkeypatch):
    from tenant_events.store import writer as writer_module

    monkeypatch.setattr(writer_module, "IDLE_BEFORE_INDEXING", 0.05)
    monkeypatch.setattr(writer_module, "INDEX_AT_LEAST_EVERY", 3600.0)
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(FTS_CHUNK)

    def broken() -> bool:
        raise RuntimeError("gone")

    writer = StoreWriter(path)
    try:
        writer.idle_waits_for.append(broken)
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
        assert _until(lambda: _indexed(path) == len(rows), 10.0)
    finally:
        writer.close()
