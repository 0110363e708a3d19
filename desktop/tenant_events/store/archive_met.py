"""Many candidate seqs, every one a match (a word's, a field value's: archive_reader.py), counted and met with the
events files without one hash table of them all.

A count of a common word's events over a year made its 12.6 million seqs distinct first (a hash aggregate: 2.8 s
of CPU); a bit per seq of their range, set by DuckDB's `bitstring_agg` and counted, takes a fifth of that, repeats
included. Meeting every row of a year's events files with one table of those seqs probed a hash table of them all
for each of its 30 million rows; each file met with the seqs of its own range alone builds a table a month's size,
which its probes find in the caches (a word's histogram 7.3 → 4.9 s of CPU, an organization's 2.7 → 1.7), and a
SEMI JOIN of the file with them took 8-25% less CPU than a CASE of `seq IN` them (a repeated seq still
meets its row once).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.duck import literal
from tenant_events.store.team_view import TEAM_PREFIX

MOST_BITS: Final = 1 << 28  # a range of seqs counted by a bit each: 32 MB at most; a wider one by DISTINCT


def span_sql(table: str, where: str) -> str:
    """(lowest seq, highest seq) of `table`'s rows passing `where`."""
    return f"SELECT min(seq), max(seq) FROM {table} WHERE {where}"  # noqa: S608 - names made by the reader


def distinct_sql(table: str, where: str, low: int, high: int) -> str:
    """How many distinct seqs `table`'s rows passing `where` hold, all within low..high (`span_sql`)."""
    if high - low > MOST_BITS:
        return f"SELECT count(DISTINCT seq) FROM {table} WHERE {where}"  # noqa: S608 - names made by the reader
    return f"SELECT bit_count(bitstring_agg(seq, {int(low)}, {int(high)})) FROM {table} WHERE {where}"  # noqa: S608


def met_sql(
    folder: Path, files: Sequence[ArchiveFile], table: str, select: str, where: str, rest: str
) -> str | None:
    """`SELECT {select} FROM ev WHERE {where} {rest}` over the rows of local `files` whose seq `table` lists, each
    file met with the seqs of its own range; None when a file is the team archive's (read as before)."""
    if not files or any(a.name.startswith(TEAM_PREFIX) for a in files):
        return None
    parts = " UNION ALL ".join(
        f"SELECT * FROM read_parquet({literal(str(folder / a.name))}) SEMI JOIN"  # noqa: S608
        f" (SELECT seq FROM {table} WHERE seq BETWEEN {int(a.first_seq)} AND {int(a.last_seq)}) USING (seq)"
        for a in files
    )
    return f"WITH ev AS ({parts}) SELECT {select} FROM ev WHERE {where} {rest}"  # noqa: S608
