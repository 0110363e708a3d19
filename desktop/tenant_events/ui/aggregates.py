"""What the main window computes off the UI thread for the current filter (no Qt calls): counts per type, the
activity histogram, rejected frames and where the possible-gap rows go. Runs on a worker with its own reader.
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass
from typing import Protocol

from tenant_events.store.records import CursorState, EventFilter, StoredGap, StoredRejected
from tenant_events.ui.event_table_model import EventPages


class TenantData(EventPages, Protocol):
    def counts_by_type(self, flt: EventFilter) -> dict[str, int]: ...
    def histogram(self, flt: EventFilter, bucket_s: int) -> list[tuple[int, dict[str, int]]]: ...
    def rejected(self, limit: int = 500) -> list[StoredRejected]: ...
    def rejected_count(self) -> int: ...
    def gaps(self) -> list[StoredGap]: ...
    def cursor(self) -> CursorState: ...
    def anchors(self, flt: EventFilter, max_seq: int, every: int) -> list[int]: ...


@dataclass(frozen=True)
class Aggregates:
    counts: dict[str, int]  # matching events per type
    buckets: list[tuple[int, dict[str, int]]]  # histogram: (bucket start, {family: n})
    bucket_s: int
    rejected: int
    gaps: list[tuple[int, str]]  # (matching events newer than the gap up to head, reason): the gap's row
    anchors: list[int] | None = None  # keys for deep pages (EventReader.seq_anchors), when asked for


def bucket_for(span_s: float) -> int:
    """A bucket size giving roughly 60–120 bars over `span_s`."""
    for size in (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400):
        if span_s / size <= 120:
            return size
    return 7 * 86400


def compute(data: TenantData, flt: EventFilter, head: int, anchors_every: int = 0) -> Aggregates:
    """The aggregates of `flt` (blocking; call on a worker thread). Gap rows are placed for snapshot `head`;
    with `anchors_every`, also the page keys of that snapshot (once per filter: the table keeps them valid)."""
    counts = data.counts_by_type(flt)
    buckets = data.histogram(flt, 60)
    size = 60
    if buckets:
        size = bucket_for(buckets[-1][0] - buckets[0][0] + 60)
        if size != 60:
            buckets = data.histogram(flt, size)
    release_freed_memory()
    gaps = [
        (data.count(flt, head, min_seq=(gap.after_seq or 0) + 1), gap.reason)
        for gap in data.gaps()
        if (gap.after_seq or 0) < head
    ]
    anchors = data.anchors(flt, head, anchors_every) if anchors_every else None
    return Aggregates(counts, buckets, size, data.rejected_count(), gaps, anchors)


def release_freed_memory() -> None:
    """Hand freed heap back to the OS after big aggregate queries (glibc keeps it otherwise; RSS grows)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _load_libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


_LIBC = _load_libc()
