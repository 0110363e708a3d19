"""The WAL is copied into the database beside the writer and never grows past its limit; nothing is lost."""

from __future__ import annotations

import gc
import sqlite3
import threading

from helpers.events_factory import row
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.checkpoint import WalLimits


def test_background_checkpoints_keep_the_wal_bounded_and_every_row(tmp_path):
    path = tmp_path / "c.sqlite3"
    wal = path.with_name(path.name + "-wal")
    # Scaled down: a background copy every ~100 kB of WAL, the writer's own from 300 kB.
    limits = WalLimits(background=100_000, restart=300_000)
    writer = StoreWriter(path, wal_limits=limits)
    sizes: list[int] = []
    try:
        for n in range(40):
            writer.commit_sync(Batch(events=[row(n * 100 + i) for i in range(100)], cursor=f"c{n}"))
            sizes.append(wal.stat().st_size)
        assert writer.wal is not None and writer.wal.background.runs > 0
        assert [t.name for t in threading.enumerate() if t.name == "store-checkpoint-c"]
    finally:
        writer.close()
    # bounded: the writer's own copy starts at 300 kB, so the WAL starts over before one more batch (~100 pages)
    assert max(sizes) < 300_000 + 200 * 4096, sizes
    assert not [t for t in threading.enumerate() if t.name == "store-checkpoint-c"]  # closed with the writer
    assert not wal.exists() or wal.stat().st_size == 0
    with EventReader(path) as reader:
        assert reader.count() == 4000 and reader.cursor().offset == "c39"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_a_read_left_open_by_a_cursor_in_a_reference_cycle_does_not_keep_the_wal_at_close(tmp_path, caplog):
    """A query that failed half-way through its rows, its exception kept where a cycle holds it: the cursor (and
    the read it keeps open) lives until the garbage collector runs. Closing the store still empties the WAL."""
    path = tmp_path / "c.sqlite3"
    wal = path.with_name(path.name + "-wal")
    writer = StoreWriter(path)
    reader = EventReader(path)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(300)], cursor="c0"))
        kept: list[object] = []

        def half_read() -> None:
            with reader._lock:
                cursor = reader._conn.execute("SELECT seq FROM events")
                cursor.fetchone()
                raise LookupError("stopped half-way")

        try:
            half_read()
        except LookupError as exc:
            kept.append(exc)
            kept.append(kept)  # the cycle: only a collection frees the exception, its frame and the cursor
        del kept
        writer.commit_sync(Batch(events=[row(300 + i) for i in range(300)], cursor="c1"))
        assert wal.stat().st_size > 0
        gc_was = gc.isenabled()
        gc.disable()  # (the collector must not run by chance before close)
        try:
            writer.close()
        finally:
            if gc_was:
                gc.enable()
        assert not [r for r in caplog.records if "emptied" in r.getMessage()]
        assert wal.stat().st_size == 0
    finally:
        writer.close()
        reader.close()
