"""The WAL is copied into the database beside the writer and never grows past its limit; nothing is lost."""

from __future__ import annotations

import sqlite3
import threading

from helpers.events_factory import row
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.store.checkpoint import WalLimits


def test_background_checkpoints_keep_the_wal_bounded_and_every_row(tmp_path):
    path = tmp_path / "c.sqlite3"
    wal = path.with_name(path.name + "-wal")
    # Scaled down: a background copy every ~100 kB of WAL, the writer's own from 300 kB, waiting for readers at 1 MB.
    limits = WalLimits(background=100_000, restart=300_000, force=1_000_000)
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
