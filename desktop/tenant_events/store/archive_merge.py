"""Merges a month's archive files into one (compaction), in memory bounded whatever the month's size.

The events are copied in seq order, streamed. The tokens are merged a range of terms at a time: a token file
lists each term once with every event that holds it, and a month of a busy tenant holds about 70 of those
entries an event (180 million for 2.5 million events). Grouping them all at once held every list in memory and
ran out of the engine's buffer (docs/archive.md "Moving"). Each range is cut where the entries so far reach
BATCH_ENTRIES, from the terms' counts alone, and written to a part of its own; the parts, read in order, make the
merged token file.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.store import archive_pairs as pairs
from tenant_events.store import archive_tally as tally
from tenant_events.store import duck
from tenant_events.store.archive_build import (
    Built,
    file_of,
    new_name,
    ordered_cursor,
    sync_folder,
    synced_rename,
)
from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.archive_layout import PARQUET_OPTIONS, ROW_GROUP, TOKEN_ROW_GROUP, tokens_name

if TYPE_CHECKING:
    import duckdb

# Entries (an event in a term's list) merged per range. Grouped, an entry takes 40-170 bytes of the engine's
# memory (840,000 did not fit in 64 MB at once; ranges of 100,000 fitted in 16 MB): 2 million stay within a few
# hundred MB of its 768, readers beside it. A month of 2.5 million events makes about 90 ranges.
BATCH_ENTRIES: Final = 2_000_000
_FETCH: Final = 65_536


def merge(folder: Path, files: Sequence[ArchiveFile], batch_entries: int = BATCH_ENTRIES) -> Built:
    """One file holding every event of `files` (all of one month), for compaction; tokens merged, not rebuilt."""
    month = files[0].month
    name = new_name(month, min(f.first_seq for f in files), max(f.last_seq for f in files))
    files = sorted(files, key=lambda f: f.first_seq)
    # each file is in seq order: files whose seqs do not interleave (one move's after another's) are read
    # one after the other, in order, and need no sort of the month's rows
    apart = all(a.last_seq < b.first_seq for a, b in itertools.pairwise(files))
    events = [str(folder / f.name) for f in files]
    tokens = [str(folder / tokens_name(f.name)) for f in files]
    with tempfile.TemporaryDirectory(dir=folder, prefix=".merge-") as scratch:
        work = Path(scratch)
        cur = ordered_cursor()
        try:
            cur.execute(
                f"COPY (SELECT * FROM read_parquet(?){'' if apart else ' ORDER BY seq'}) TO {duck.literal(str(work / 'events.parquet'))}"  # noqa: S608
                f" ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {ROW_GROUP})",
                [events],
            )
            parts = _token_parts(cur, tokens, work, apart, batch_entries)
            cur.execute(
                f"COPY (SELECT term, n, seqs FROM read_parquet(?)) TO {duck.literal(str(work / 'tokens.parquet'))}"  # noqa: S608
                f" ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})",
                [parts],
            )
        finally:
            cur.close()
        synced_rename(work / "tokens.parquet", folder / tokens_name(name))
        synced_rename(work / "events.parquet", folder / name)
    sync_folder(folder)
    assert all(f.fts_upto < f.first_seq for f in files), "merged before the live index let go of its rows"
    return Built(file_of(name, month, folder), (folder / name, folder / tokens_name(name)))


def _token_parts(
    cur: duckdb.DuckDBPyConnection, tokens: list[str], work: Path, apart: bool, batch_entries: int
) -> list[str]:
    """The merged tokens as part files in term order, a range of terms each. Files `apart` in seqs join a term's
    lists in file order: sorting the lists themselves (as lists, by their first seq, since no two overlap) took
    half the CPU of an ordered aggregate (`list(seqs ORDER BY seqs[1])`). Others sort the joined list."""
    joined = "flatten(list_sort(list(seqs)))" if apart else "list_sort(flatten(list(seqs)))"
    parts = []
    for i, (low, high) in enumerate(list(_ranges(cur, tokens, batch_entries))):
        where, params = _between(low, high)
        part = work / f"tokens-{i:05d}.parquet"
        # a tally's rows (archive_tally.py) add up each hour's counts: a merged file holds them as if written at
        # once; the counted rows of the pairs of tokens (archive_pairs.py) are merged as those say
        also = f"{where} {'AND' if where else 'WHERE'}"
        words = f"{also} NOT {tally.TALLIED} AND NOT {pairs.COUNTED}"
        tallies = tally.merged_sql("read_parquet(?)", f"{also} {tally.TALLIED}")
        counted = pairs.merged_sql("read_parquet(?)", f"{also} {pairs.COUNTED}", len(tokens))
        cur.execute(
            f"COPY (SELECT term, n, seqs FROM (SELECT term, len(seqs) AS n, seqs FROM (SELECT term, {joined} AS seqs"  # noqa: S608
            f" FROM read_parquet(?) {words} GROUP BY term) UNION ALL {tallies} UNION ALL {counted}) ORDER BY term)"
            f" TO {duck.literal(str(part))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})",
            [tokens, *params, tokens, *params, tokens, *params],
        )
        parts.append(str(part))
    return parts


def _ranges(
    cur: duckdb.DuckDBPyConnection, tokens: list[str], batch_entries: int
) -> Iterator[tuple[str | None, str | None]]:
    """[low, high) ranges of terms (None: unbounded) of about `batch_entries` entries each, from the files' terms
    and counts (no lists read); a term is never split. The files' rows are sorted, not grouped: a term's rows
    come together and are summed here, in the pass that cuts the ranges (half the CPU of a GROUP BY and its
    ORDER BY)."""
    cur.execute("SELECT term, n FROM read_parquet(?) ORDER BY term", [tokens])
    low: str | None = None
    held = 0
    term: str | None = None
    count = 0
    while rows := cur.fetchmany(_FETCH):
        for next_term, n in rows:
            if next_term == term:
                count += n
                continue
            if term is not None:
                if held and held + count > batch_entries:
                    yield low, term
                    low, held = term, 0
                held += count
            term, count = next_term, n
    if term is not None and held and held + count > batch_entries:
        yield low, term
        low = term
    yield low, None


def _between(low: str | None, high: str | None) -> tuple[str, list[str]]:
    """The WHERE clause (and its parameters) of terms in [low, high)."""
    tests, params = [], []
    if low is not None:
        tests.append("term >= ?")
        params.append(low)
    if high is not None:
        tests.append("term < ?")
        params.append(high)
    return ("WHERE " + " AND ".join(tests) if tests else ""), params
