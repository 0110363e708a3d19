"""The live tier's disk is bounded by its setting, the access history included: as simulated days pass, the spans
that ended before the live cutoff, and the marks and deletions no live span needs, leave the live file for the
archive folder (store/access_settle.py), and the access review still answers for every past moment exactly as a
store that kept the whole history live does."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from helpers.entity_events import T0
from helpers.tenant_days import tenant_days
from tenant_events.simulator.world import iso_ms
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.access_settled import settled_point
from tenant_events.store.archive_keeper import keep
from tenant_events.store.directory import STAMP_SHIFT
from tenant_events.values.retention import Retention

DAY = 86400.0
DAYS, KEEP_LIVE, PER_DAY = 36, 4, 160
HISTORY = ("access_spans", "access_marks", "access_ends")


def _days(seed: int = 5) -> Iterator[tuple[float, list[EventRow]]]:
    return tenant_days(DAYS, PER_DAY, seed)


def _rows(path: Path) -> tuple[int, int]:
    """The live file's history rows: those of the live window (stamped at or after the settled point), and
    those of the links that still held at the point (their spans and the marks inside them: the state then)."""
    conn = sqlite3.connect(path)
    try:
        point = settled_point(conn)
        window = sum(
            conn.execute(f"SELECT count(*) FROM {table} WHERE {column} >= ?", (point,)).fetchone()[0]
            for table, column in (("access_spans", "since"), ("access_marks", "at"), ("access_ends", "at"))
        )
        total = sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in HISTORY)
        return window, total - window
    finally:
        conn.close()


def _held(path: Path, moment: int) -> set[tuple[object, ...]]:
    with AccessReader(path) as reader:
        return {
            (s.relation, s.ids, s.since, s.since_seq, s.until, s.until_seq)
            for s in reader.held_at(moment).spans
        }


def test_the_live_files_history_stays_bounded_and_every_past_moment_answers_the_same(tmp_path: Path):
    settled_db, whole_db = tmp_path / "settled.sqlite3", tmp_path / "whole.sqlite3"
    at_once_db = tmp_path / "at-once.sqlite3"  # kept once at the end: its first pass settles month by month
    settled, whole, at_once = StoreWriter(settled_db), StoreWriter(whole_db), StoreWriter(at_once_db)
    policy = Retention(keep_live_days=KEEP_LIVE, settle_seconds=0)
    grew: dict[int, tuple[int, int, int]] = {}  # day → the settled file's window and state rows, the whole's
    try:
        for day, (end, rows) in enumerate(_days()):
            for writer in (settled, whole, at_once):
                for at in range(0, len(rows), 500):
                    writer.commit_sync(Batch(events=rows[at : at + 500], cursor=str(day * 10_000 + at)))
                writer.index_all_sync()  # (the idle-time indexer: full-text, directory, access history)
            keep(settled, policy, now=end)
            grew[day] = (*_rows(settled_db), sum(_rows(whole_db)))
        keep(at_once, policy, now=end)
    finally:
        settled.close()
        whole.close()
        at_once.close()

    conn = sqlite3.connect(settled_db)
    try:
        point = settled_point(conn)
        assert point >> STAMP_SHIFT >= int((T0.timestamp() + (DAYS - KEEP_LIVE - 1) * DAY) * 1000)
        older = {
            "spans that ended before the point": "SELECT count(*) FROM access_spans WHERE until < ?",
            "deletions before it": "SELECT count(*) FROM access_ends WHERE at < ?",
            "marks before it outside a span that held at it": "SELECT count(*) FROM access_marks AS m WHERE"
            " m.at < ? AND NOT EXISTS (SELECT 1 FROM access_spans AS s WHERE s.rel = m.rel AND s.a = m.a"
            " AND s.b = m.b AND s.c = m.c AND s.since <= m.at)",
        }
        for what, sql in older.items():
            assert conn.execute(sql, (point,)).fetchone()[0] == 0, what
        files = conn.execute("SELECT count(*), sum(rows) FROM access_files").fetchone()
        assert files[0] >= 2 and files[1] > 0, "the settled spans are in the archive folder, a file a month"
    finally:
        conn.close()
    # Bounded: over the second half of the days the whole history's rows keep growing with the days; the live
    # window's do not. What else the settled file keeps is the state at the point (the links that held then,
    # which grow with the simulated tenant, as its directory does), less than the whole history each day.
    half, last = DAYS // 2, DAYS - 1
    assert grew[last][2] > 1.6 * grew[half][2], grew
    assert grew[last][0] < 1.3 * grew[half][0], grew
    assert all(window + state < 0.6 * peer for window, state, peer in list(grew.values())[half:]), grew

    # the same answer for every past moment: each day's noon and random moments, before and after the point
    rng = random.Random(9)
    start_ms = int(T0.timestamp() * 1000)
    moments = [start_ms + int((d + 0.5) * DAY * 1000) for d in range(DAYS)]
    moments += [start_ms + rng.randrange(int(DAYS * DAY * 1000)) for _ in range(20)]
    for ms in moments:
        moment = (ms << STAMP_SHIFT) | ((1 << STAMP_SHIFT) - 1)
        assert _held(settled_db, moment) == _held(whole_db, moment), f"at {iso_ms(ms / 1000)}"
        assert _held(at_once_db, moment) == _held(whole_db, moment), f"at {iso_ms(ms / 1000)}, kept once"
