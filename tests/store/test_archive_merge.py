"""Merging a month's archive files (store/archive_merge.py): the merged file and its tokens are those of the month
written at once, in seq order whether the files interleave or not, with the tokens merged a range of terms at a
time so that memory stays bounded whatever the month's size."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import duckdb
import pytest

from helpers.history import history
from tenant_events.store import duck
from tenant_events.store.archive_build import LiveRow, ordered_cursor, write_month
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.archive_merge import _ranges, _token_parts, merge
from tenant_events.store.archive_pairs import COVER, WORD
from tenant_events.store.archive_pairs import MARK as PAIRS

DAY = 86400.0


def _live_rows(n: int, seed: int) -> list[LiveRow]:
    rows = history(n, time.time() - 40 * DAY, 5.0, seed)
    return [
        (1 + i, r.event_id, r.offset, r.type, r.time, r.time_ms, r.source, r.tenant, r.purpose, None, r.raw,
         r.received_at)
        for i, r in enumerate(rows)
    ]  # fmt: skip


def _rows(path: Path, columns: str) -> list[tuple[object, ...]]:
    cur = duck.cursor()
    try:
        cur.execute("SET SESSION preserve_insertion_order = true")  # the file's own order
        return cur.execute(f"SELECT {columns} FROM read_parquet(?)", [str(path)]).fetchall()
    finally:
        cur.close()


@pytest.mark.parametrize("batch", [2_000, 30_000, 10**9])
@pytest.mark.parametrize("layout", ["apart", "woven"])
def test_a_merged_month_is_the_month_written_at_once(tmp_path, layout, batch):
    """Events in seq order and every term's list whole, sorted and once, for ranges of many terms each (2,000
    entries, about 85 ranges), of some thousands (6 ranges), and one range for all."""
    rows = _live_rows(2400, seed=4)
    whole = write_month(tmp_path / "whole", "2026-01", rows)
    if layout == "apart":
        parts = [rows[at : at + 600] for at in (1800, 0, 1200, 600)]
    else:
        parts = [rows[k::3] for k in (2, 0, 1)]
    built = [write_month(tmp_path / layout, "2026-01", part) for part in parts]
    merged = merge(tmp_path / layout, [b.file for b in built], batch_entries=batch)
    events = "seq, time_ms, type, event_id, raw, summary"
    assert _rows(tmp_path / layout / merged.file.name, events) == _rows(
        tmp_path / "whole" / whole.file.name, events
    )
    tokens = [
        tmp_path / layout / tokens_name(merged.file.name),
        tmp_path / "whole" / tokens_name(whole.file.name),
    ]
    found, expected = (_rows(t, "term, n, seqs") for t in tokens)
    # the pairs of tokens (archive_pairs.py) are listed from each file's own words: compared below
    assert _unpaired(found) == _unpaired(expected) and len(_unpaired(found)) > 3000
    assert _paired(found) == _merged_pairs([tmp_path / layout / tokens_name(b.file.name) for b in built])
    assert dict((t, n) for t, n, _s in _paired(found))[COVER] == 2400
    assert merged.file.rows == 2400 and (merged.file.first_seq, merged.file.last_seq) == (1, 2400)


def _unpaired(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [r for r in rows if not str(r[0]).startswith(PAIRS)]


def _paired(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return [r for r in rows if str(r[0]).startswith(PAIRS)]


def _merged_pairs(paths: list[Path]) -> list[tuple[object, ...]]:
    """The pair rows a merge of these token files keeps: the events' rows joined, the covered events added up,
    a word kept when every file lists it, from the latest of their seqs."""
    listed: dict[str, list[int]] = {}
    words: dict[str, list[int]] = {}
    covered = 0
    for path in paths:
        for term, n, seqs in _paired(_rows(path, "term, n, seqs")):
            if term == COVER:
                covered += int(n)  # type: ignore[call-overload]
            elif str(term).startswith(WORD):
                words.setdefault(str(term), []).append(int(n))  # type: ignore[call-overload]
            else:
                listed.setdefault(str(term), []).extend(seqs)  # type: ignore[arg-type]
    out: list[tuple[object, ...]] = [(t, len(s), sorted(s)) for t, s in listed.items()]
    out += [(t, max(ns), []) for t, ns in words.items() if len(ns) == len(paths)]
    out.append((COVER, covered, []))
    return sorted(out, key=lambda r: str(r[0]))


def test_the_token_ranges_hold_about_a_batch_each_and_never_split_a_term(tmp_path):
    rows = _live_rows(3000, seed=5)
    built = [write_month(tmp_path, "2026-01", rows[at : at + 1000]) for at in (0, 1000, 2000)]
    tokens = [str(tmp_path / tokens_name(b.file.name)) for b in built]
    cur = duck.cursor()
    try:
        counts = dict(
            cur.execute("SELECT term, sum(n) FROM read_parquet(?) GROUP BY term", [tokens]).fetchall()
        )
        ranges = list(_ranges(cur, tokens, 5000))
    finally:
        cur.close()
    assert ranges[0][0] is None and ranges[-1][1] is None and len(ranges) > 10
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))  # adjacent, no gap
    for low, high in ranges:
        held = [n for t, n in counts.items() if (low is None or t >= low) and (high is None or t < high)]
        assert sum(held) <= 5000 or len(held) == 1  # a term alone may hold more than a batch
    assert sum(counts.values()) > 5000 * 10


def test_a_months_tokens_merge_within_a_memory_limit_that_one_grouping_of_them_exceeds(tmp_path):
    """The tokens of 12,000 events (about 840,000 entries) grouped at once need more than 64 MB of the engine's
    memory; merged a range at a time (100,000 entries) they fit in 16. Here the limit is 24 MB: the ranges' parts
    come out, and they hold what one grouping makes once the limit is lifted. A busy tenant's month (2.5 million
    events) ran out of the engine's whole 768 MB when its tokens were grouped at once."""
    rows = _live_rows(12_000, seed=7)
    built = [
        write_month(tmp_path / "month", "2026-01", rows[at : at + 3000]) for at in range(0, 12_000, 3000)
    ]
    tokens = [str(tmp_path / "month" / tokens_name(b.file.name)) for b in built]
    cur = ordered_cursor()  # of the writer's engine, which merges: its limit is the one that counts
    try:
        cur.execute("SET memory_limit = '24MB'")
        try:
            with pytest.raises(duckdb.OutOfMemoryException):
                _token_parts(cur, tokens, _folder(tmp_path, "one"), True, 10**9)  # all the lists at once
            parts = _token_parts(cur, tokens, _folder(tmp_path, "ranges"), True, 100_000)
        finally:
            cur.execute(f"SET memory_limit = '{duck.MEMORY_LIMIT}'")
        one = _token_parts(cur, tokens, _folder(tmp_path, "again"), True, 10**9)
        read = "SELECT term, n, seqs FROM read_parquet(?)"
        assert len(parts) > 5 and len(one) == 1
        assert cur.execute(read, [parts]).fetchall() == cur.execute(read, [one]).fetchall()
    finally:
        cur.close()


def _folder(base: Path, name: str) -> Path:
    (base / name).mkdir()
    return base / name
