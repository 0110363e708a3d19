"""The WAL is copied into the database beside the writer and never grows past its limit; nothing is lost."""

from __future__ import annotations

import sqlite3
import threading

from helpers.events_factory import row
from tenant_events.store import Batch, EventReader, StoreWriter


def test_background_checkpoints_keep_the_wal_bounded_and_every_row(tmp_path):
    path = tmp_path / "c.sqlite3"
    wal = path.with_name(path.name + "-wal")
    # Scaled down: a checkpoint asked for every ~100 kB of rows, the writer finishing it past 1 MB of WAL.
    writer = StoreWriter(path, checkpoint_every=100_000, wal_hard_limit=1_000_000)
    sizes: list[int] = []
    try:
        for n in range(40):
            writer.commit_sync(Batch(events=[row(n * 100 + i) for i in range(100)], cursor=f"c{n}"))
            sizes.append(wal.stat().st_size)
        checkpointer = writer._checkpointer
        assert checkpointer is not None and checkpointer.runs > 0
        assert [t.name for t in threading.enumerate() if t.name == "store-checkpoint-c"]
    finally:
        writer.close()
    # bounded: the hard limit plus at most one batch (~100 pages) before the writer's own copy, then it restarts
    assert max(sizes) < 1_000_000 + 200 * 4096, sizes
    assert not [t for t in threading.enumerate() if t.name == "store-checkpoint-c"]  # closed with the writer
    assert not wal.exists() or wal.stat().st_size == 0
    with EventReader(path) as reader:
        assert reader.count() == 4000 and reader.cursor().offset == "c39"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
