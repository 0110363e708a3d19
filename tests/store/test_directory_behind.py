"""A small batch stored while the directory is far behind (a catch-up's slower moment) is left to the idle-time
indexer without offering it to the directory's trigger, whose statement would walk every seq the directory lacks
before dropping them all; one within reach goes in at once, in its own transaction, as every live batch does."""

from __future__ import annotations

from helpers.entity_events import simulated_rows
from tenant_events.store import Batch, StoreWriter, directory
from tenant_events.store.directory import LIVE_BATCH
from tenant_events.store.schema import connect


def _stored(tmp_path, n):
    path = tmp_path / "demo.sqlite3"
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=simulated_rows(n)[0], cursor="backlog"))  # left to the indexer
    finally:
        writer.close()
    return path


def _offered(conn, last_seq):
    """The statements a small batch's `after_batch` ran, and the directory's watermark after it."""
    ran: list[str] = []
    conn.execute("BEGIN IMMEDIATE")
    conn.set_trace_callback(ran.append)
    try:
        directory.after_batch(conn, last_seq, 5)
    finally:
        conn.set_trace_callback(None)
    upto = directory.watermark(conn)
    conn.execute("ROLLBACK")
    return [s for s in ran if "directory_pending" in s], upto


def test_a_small_batch_far_behind_is_not_offered_to_the_trigger(tmp_path):
    path = _stored(tmp_path, 4 * LIVE_BATCH)
    conn = connect(path)
    try:
        behind = directory.watermark(conn)
        offered, upto = _offered(conn, 4 * LIVE_BATCH)
        assert offered == []
        assert upto == behind  # left to the indexer, as the trigger would have left it
    finally:
        conn.close()


def test_a_small_batch_within_reach_goes_in_at_once(tmp_path):
    path = _stored(tmp_path, 4 * LIVE_BATCH)
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        directory.catch_up(conn, 3 * LIVE_BATCH)
        conn.execute("COMMIT")
        offered, upto = _offered(conn, 4 * LIVE_BATCH)
        assert offered  # (the trigger's own statements are traced with it)
        assert upto == 4 * LIVE_BATCH
    finally:
        conn.close()
