"""The matches of one token-driven filter, kept for the next questions about it (archive_reader.py).

The window asks of one filter its count, its time span, its histogram and its page keys, one after the other:
each a scan of every file's checked columns (a field's values, the raw JSON) for the same rows. The first of
them keeps the matching rows' seq, time and type in a temporary table of the reader's cursor; the others read
that table. A filter is kept only when the token files bound its matches (at most `MOST_KEPT` candidates):
the table stays small. Keyed by the snapshot's files, which never change once listed (a file that is merged or
dropped leaves the catalog: a new snapshot lists other files), so a kept answer is never stale. A team archive's
rows are not kept (its retention removes rows from under the same name).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.team_view import TEAM_PREFIX
from tenant_events.values.events import EventFilter

if TYPE_CHECKING:
    import duckdb

MOST_KEPT: Final = 2_000_000  # candidate rows: ~30 MB of (seq, time, type) at most
MOST_SEQS: Final = (
    4_000_000  # a filter's matching seqs kept without their rows (archive_reader): 32 MB at most
)
_TABLES: Final = 6  # tables kept per reader: two filters' (a filter may keep its seqs and its matches)


def key_of(
    files: Sequence[ArchiveFile], f: EventFilter, alerts: Mapping[int, tuple[int, ...]]
) -> Hashable | None:
    """The cache key of a filter over `files`, None when it may not be kept."""
    if any(a.name.startswith(TEAM_PREFIX) for a in files):
        return None
    return (tuple(files), f, tuple(sorted(alerts.items())))


class Matches:
    """Temporary tables `matches_<n>` (seq, time_ms, type) of a cursor, the newest `_TABLES` filters."""

    def __init__(self) -> None:
        self._tables: OrderedDict[Hashable, str] = OrderedDict()
        self._sizes: dict[str, int] = {}  # a table of seqs kept with repeats: how many distinct seqs it holds
        self._made = 0

    def get(self, key: Hashable) -> str | None:
        table = self._tables.get(key)
        if table is not None:
            self._tables.move_to_end(key)
        return table

    def add(
        self,
        cursor: duckdb.DuckDBPyConnection,
        key: Hashable,
        select: str,
        run: Callable[[duckdb.DuckDBPyConnection, str], object],
        size: int | None = None,
    ) -> str:
        """Keep `select`'s rows (seq, time_ms, type) as the matches of `key`, made by `run` (which says when a
        file of the snapshot is gone); the oldest kept filter leaves. `size`: the distinct seqs of rows that
        may repeat one (`size_of`)."""
        self._made += 1
        table = f"matches_{self._made}"
        run(cursor, f"CREATE TEMP TABLE {table} AS {select}")
        self._tables[key] = table
        if size is not None:
            self._sizes[table] = size
        while len(self._tables) > _TABLES:
            _old, gone = self._tables.popitem(last=False)
            self._sizes.pop(gone, None)
            cursor.execute(f"DROP TABLE IF EXISTS {gone}")
        return table

    def size_of(self, table: str) -> int | None:
        """How many distinct seqs the kept `table` holds, when it was given (`add`)."""
        return self._sizes.get(table)

    def discard(self, key: Hashable) -> None:
        """Stop keeping `key`'s table (the caller drops it or uses it up)."""
        table = self._tables.pop(key, None)
        if table is not None:
            self._sizes.pop(table, None)

    def forget(self) -> None:
        """The cursor closed: its tables are gone."""
        self._tables.clear()
        self._sizes.clear()
