"""One tenant's database as the window reads it: the store's `EventReader` as a snapshot bounded by `head`.

The window holds three per tenant, each on its own connection (tenant/link.py): the UI thread's, the worker
threads' (aggregates, counts, export) and a query's first page's. The reader pages newest-first over everything stored; the model wants a stable snapshot `seq <= head` so row
numbers do not move under the user between two `advance_head()` calls. Rows stored after `head` (the writer
commits on its own thread) are counted and skipped here.
"""

from __future__ import annotations

from pathlib import Path

from tenant_events.store import EventReader
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.live_walk import NO_LOW
from tenant_events.store.records import CursorState, StoredGap
from tenant_events.values.events import EventFilter, StoredEvent, StoredRejected

ALL = EventFilter()


class TenantReader:
    """The reads the table, its aggregates, the export and the detail pane need, over one `EventReader`."""

    def __init__(self, reader: EventReader) -> None:
        self.reader = reader
        self._directory: DirectoryReader | None = None

    @property
    def path(self) -> Path:
        return self.reader.path

    def directory(self) -> DirectoryReader:
        """The tenant's entity directory (names for summary sentences), opened on first use."""
        if self._directory is None:
            self._directory = DirectoryReader.over(self.reader)
        return self._directory

    def head_seq(self) -> int:
        newest = self.reader.page_before(ALL, None, 1)
        return newest[0].seq if newest else 0

    def _newer(self, flt: EventFilter, after_seq: int) -> int:
        """Matching rows stored after the snapshot (usually none: the model advances on every commit)."""
        return self.reader.count(flt, min_seq=after_seq + 1)

    def count(self, flt: EventFilter, max_seq: int, min_seq: int = 0) -> int:
        """Matching rows with `min_seq <= seq <= max_seq`: one COUNT in the store, no rows read into Python."""
        if min_seq > max_seq:
            return 0
        return self.reader.count(flt, min_seq=min_seq if min_seq != 0 else None, max_seq=max_seq)

    def count_new(self, flt: EventFilter, head: int, rows: int, new_head: int) -> int:
        """How many rows matching `flt` were stored in (head, new_head]; safe to call on a worker thread.

        Unfiltered: an index count of everything up to `new_head` minus the rows shown (seq has holes where
        duplicates were dropped, so seq arithmetic would be wrong); filtered: the new matching rows only.
        """
        if flt == EventFilter():
            return self.count(flt, new_head) - rows
        return self.count(flt, new_head, min_seq=head + 1)

    def page(self, flt: EventFilter, max_seq: int, offset: int, limit: int) -> list[StoredEvent]:
        if offset == 0:
            return self.reader.page_before(flt, max_seq + 1, limit)
        skip = self._newer(flt, max_seq)
        return self.reader.page(flt, offset + skip, limit)

    def older(self, flt: EventFilter, before_seq: int, limit: int) -> list[StoredEvent]:
        return self.reader.page_before(flt, before_seq, limit)

    def newer(self, flt: EventFilter, after_seq: int, max_seq: int, limit: int) -> list[StoredEvent]:
        """The `limit` matching rows just newer than `after_seq` (up to `max_seq`), newest first; 0: the oldest
        on (a team archive's rows are numbered below 0, store/archive_lake.py)."""
        after = NO_LOW if after_seq == 0 else after_seq
        rows = [e for e in self.reader.newer_than(flt, after, limit) if e.seq <= max_seq]
        rows.reverse()
        return rows

    def anchors(self, flt: EventFilter, max_seq: int, every: int) -> list[int]:
        return self.reader.seq_anchors(flt, max_seq, every)

    def get(self, seq: int) -> StoredEvent | None:
        return self.reader.get(seq)

    def range_raw(self, first_seq: int, last_seq: int) -> list[tuple[StoredEvent, str]]:
        return self.reader.range_raw(first_seq, last_seq)

    def counts_by_type(self, flt: EventFilter) -> dict[str, int]:
        return self.reader.counts_by_type(flt)

    def time_span(self, flt: EventFilter) -> tuple[int, int] | None:
        return self.reader.time_span(flt)

    def histogram(self, flt: EventFilter, bucket_s: int) -> list[tuple[int, dict[str, int]]]:
        return self.reader.histogram(flt, bucket_s)

    def rejected(self, limit: int = 500) -> list[StoredRejected]:
        return self.reader.rejected(limit)

    def rejected_count(self) -> int:
        return self.reader.rejected_count()

    def gaps(self) -> list[StoredGap]:
        return self.reader.gaps()

    def cursor(self) -> CursorState:
        return self.reader.cursor()

    def close(self) -> None:
        self.reader.close()
