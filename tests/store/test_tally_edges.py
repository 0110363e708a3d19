"""A file's counts per hour and type (store/archive_tally.py) over events that make them easy to get wrong: times
on and either side of an hour's edge, out of seq order, types spelled like a tally row's own parts (colons,
digits, `test`; a colon, which leaves the file read from its events), accents, test events and others' purposes; in one file, in two files of a month, and in their
merge. Every count, per-type count and histogram is the one the events themselves give."""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest

from helpers.history import history, live_rows
from tenant_events.store.archive_build import LiveRow, write_month
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot
from tenant_events.store.archive_merge import merge
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.archive_source import ArchiveSource
from tenant_events.values.events import EventFilter

HOUR = 3_600_000
KINDS = ("user.created", "x", "test", "tést.ünï", "user.created.12", "organization.member.added")
# a type that holds a colon makes a tally row of another form: its file is read from its events, as before
COLONS = ("a:b:c", "user.created:12", "group:1.x")
PURPOSES = (None, "test", "Test", "demo", "")
SIZES = (60_000, 1_800_000, HOUR, 2 * HOUR, 5_400_000, 86_400_000, 7 * 86_400_000)


def _rows(n: int, seed: int, kinds: tuple[str, ...] = KINDS) -> list[LiveRow]:
    rng = random.Random(seed)
    base = (int(time.time() * 1000) // HOUR - 24 * 40) * HOUR
    rows = []
    for row in live_rows(history(n, time.time() - 40 * 86400, 3000.0, seed)):
        hour = base + rng.randrange(0, 24 * 35) * HOUR
        at = rng.choice([hour, hour - 1, hour + 1, hour + HOUR // 2, hour + HOUR - 1])
        rows.append((*row[:3], rng.choice(kinds), row[4], at, row[6], row[7], rng.choice(PURPOSES), *row[9:]))
    return rows


def _expected(rows: list[LiveRow], f: EventFilter) -> list[object]:
    kept = [r for r in rows if (not f.types or r[3] in f.types) and (f.include_test or r[8] != "test")]
    out: list[object] = [len(kept), dict(Counter(r[3] for r in kept))]
    for size in SIZES:
        out.append(sorted(Counter(((r[5] // size) * size, r[3].split(".")[0]) for r in kept).items()))
    return out


def _answers(reader: ArchiveReader, files: list[ArchiveFile], f: EventFilter) -> list[object]:
    snap = ArchiveSnapshot(max(a.last_seq for a in files), tuple(files))
    out: list[object] = [reader.count(snap, f, {}), reader.counts_by_type(snap, f, {})]
    for size in SIZES:
        out.append(sorted(((b, fam), n) for b, fam, n in reader.histogram(snap, f, {}, size)))
    return out


FILTERS = (
    EventFilter(),
    EventFilter(include_test=False),
    EventFilter(types=frozenset({"a:b:c", "user.created:12", "test"})),
    EventFilter(types=frozenset({"tést.ünï", "x"}), include_test=False),
    EventFilter(types=frozenset({"user.created"})),
)


@pytest.mark.parametrize("colons", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_tallies_count_awkward_events_as_the_events_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, colons: bool
) -> None:
    rows = _rows(700, seed, KINDS + COLONS if colons else KINDS)
    seen: list[str] = []
    real = ArchiveSource._execute

    def spy(cursor, sql, params=()):  # type: ignore[no-untyped-def]
        seen.append(sql)
        return real(cursor, sql, params)

    monkeypatch.setattr(ArchiveSource, "_execute", staticmethod(spy))
    one = write_month(tmp_path / "one", "2026-01", rows).file
    parts = [write_month(tmp_path / "two", "2026-01", part).file for part in (rows[:333], rows[333:])]
    merged = merge(tmp_path / "two", parts).file
    for folder, files in ((tmp_path / "one", [one]), (tmp_path / "two", parts), (tmp_path / "two", [merged])):
        reader = ArchiveReader(folder)
        try:
            for f in FILTERS:
                assert _answers(reader, files, f) == _expected(rows, f), (files, f)
                seen.clear()
                snap = ArchiveSnapshot(max(a.last_seq for a in files), tuple(files))
                reader.count(snap, f, {})
                reader.counts_by_type(snap, f, {})
                reader.histogram(snap, f, {}, 2 * HOUR)
                read = [s for s in seen if re.search(r"\bFROM ev\b", s)]
                assert bool(read) is colons, (f, read)  # the tallies answered, or the events as before
        finally:
            reader.close()
