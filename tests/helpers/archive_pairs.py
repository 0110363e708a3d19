"""Two stores of the same events, one all live and one with most of them archived, and what the archive runs
meanwhile: the archive read tests compare the two tiers' answers and count the archive's statements."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers.history import history
from tenant_events.store import Batch, EventReader, EventRow, StoreWriter, duck
from tenant_events.store.archive_build import ordered_cursor
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_layout import PARQUET_OPTIONS
from tenant_events.store.archive_source import ArchiveSource
from tenant_events.store.archive_tally import MARK
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention


def store_rows(path: Path, rows: list[EventRow], keep_days: float | None, now: float) -> None:
    """`rows` stored and indexed; with `keep_days`, what is older than that at `now` moved to the archive."""
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), 400):
            writer.commit_sync(Batch(events=rows[at : at + 400]))
        writer.index_all_sync()
        if keep_days is not None:
            keep(writer, Retention(keep_live_days=keep_days, settle_seconds=0), now)
            writer.index_all_sync()
    finally:
        writer.close()


def tiered_pair(tmp: Path, rows: list[EventRow], now: float) -> tuple[Path, Path]:
    """One store all live, one with everything older than 10 days archived."""
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    store_rows(one, rows, None, now)
    store_rows(two, rows, 10, now)
    return one, two


def random_pair(
    tmp: Path, n: int, days: float, seed: int, keep_days: float, move_rows: int
) -> tuple[Path, Path]:
    """`n` random events over the last `days`: one store all live, one with what is older than `keep_days` moved
    in runs of at most `move_rows` (several files a month, merged as the keeper does)."""
    rows = history(n, time.time() - days * 86400, days * 86400 / n, seed)
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    for path in (one, two):
        writer = StoreWriter(path)
        try:
            for at in range(0, n, 400):
                writer.commit_sync(Batch(events=rows[at : at + 400]))
            writer.index_all_sync()
            if path == two:
                keep(writer, Retention(keep_live_days=keep_days, settle_seconds=0), move_rows=move_rows)
                writer.index_all_sync()
        finally:
            writer.close()
    return one, two


def strip_tallies(tokens: Path) -> None:
    """The token file as an earlier writer left it: no tally rows."""
    strip_marked(tokens, MARK)


class Statements:
    """The SQL an archive reader runs from now on (its own statements, run for real)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[str] = []
        run = ArchiveSource._execute

        def spy(cursor: object, sql: str, params: Sequence[object] = ()) -> list[object]:
            self.seen.append(sql)
            return run(cursor, sql, params)  # type: ignore[arg-type]

        monkeypatch.setattr(ArchiveSource, "_execute", staticmethod(spy))

    def events_read(self) -> list[str]:
        """Statements that read the events files: their relation `ev` (archive_source.py; a token lookup names it
        in its WITH clause without reading it)."""
        return [s for s in self.seen if re.search(r"\bFROM ev\b", s)]


@contextmanager
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every statement the archive runs meanwhile."""
    yield Statements(monkeypatch).seen


def strip_marked(tokens: Path, mark: str) -> None:
    """The token file as an earlier writer left it: no rows starting with `mark`."""
    tmp = tokens.with_name("stripped.tmp")
    cur = ordered_cursor()
    try:
        cur.execute(
            f"COPY (SELECT * FROM read_parquet(?) WHERE NOT starts_with(term, '{mark}')) TO {duck.literal(str(tmp))} ({PARQUET_OPTIONS})",
            [str(tokens)],
        )
    finally:
        cur.close()
    tmp.replace(tokens)


def answers(reader: EventReader, f: EventFilter) -> tuple[object, ...]:
    """A filter's first page, count, histogram and counts by type: what the window shows of it."""
    return (
        [e.seq for e in reader.page_before(f, None, 50)],
        reader.count(f),
        reader.histogram(f, 86400),
        reader.counts_by_type(f),
    )
