"""What the main window computes off the UI thread for the current filter (no Qt calls): counts per type, the
activity histogram, rejected frames and where the possible-gap rows go. Runs on a worker with its own reader.
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass, replace

from tenant_events.values.events import EventFilter
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.time_range import filter_span

PURPOSE_KEYS = ("xpurpose", "a0purpose")  # the envelope attribute's names: tokens of the indexed stored JSON


@dataclass(frozen=True)
class Aggregates:
    counts: dict[str, int]  # matching events per type
    buckets: list[tuple[int, dict[str, int]]]  # histogram: (bucket start, {family: n})
    bucket_s: int
    rejected: int
    gaps: list[tuple[int, str]]  # (matching events newer than the gap up to head, reason): the gap's row
    anchors: list[int] | None = None  # keys for deep pages (EventReader.seq_anchors), when asked for
    has_purpose: bool = False  # some matching event has an a0purpose (the Purpose column then shows)


def bucket_for(span_s: float) -> int:
    """A bucket size giving roughly 60–120 bars over `span_s`."""
    for size in (1, 5, 10, 30, 60, 300, 600, 1800, 3600, 3 * 3600, 6 * 3600, 86400):
        if span_s / size <= 120:
            return size
    return 7 * 86400


def compute(reader: TenantReader, flt: EventFilter, head: int, anchors_every: int = 0) -> Aggregates:
    """The aggregates of `flt` (blocking; call on a worker thread). Gap rows are placed for snapshot `head`;
    with `anchors_every`, also the page keys of that snapshot (once per filter: the table keeps them valid)."""
    counts = reader.counts_by_type(flt)
    span = filter_span(flt)
    if span is not None:  # the histogram draws the filter's range: buckets sized for it, not for the data
        size = bucket_for(span[1] - span[0])
        buckets = reader.histogram(flt, size)
    else:  # sized for the matches' span in whole minutes, then counted once
        ends = reader.time_span(flt)
        size = 60 if ends is None else bucket_for(ends[1] // 60_000 * 60 - ends[0] // 60_000 * 60 + 60)
        buckets = [] if ends is None else reader.histogram(flt, size)
    release_freed_memory()
    gaps = [
        (reader.count(flt, head, min_seq=(gap.after_seq or 0) + 1), gap.reason)
        for gap in reader.gaps()
        if (gap.after_seq or 0) < head
    ]
    anchors = reader.anchors(flt, head, anchors_every) if anchors_every else None
    purpose = has_purpose(reader, flt, head) if counts else False
    return Aggregates(counts, buckets, size, reader.rejected_count(), gaps, anchors, purpose)


def has_purpose(reader: TenantReader, flt: EventFilter, head: int) -> bool:
    """Whether any matching event up to `head` carries a purpose (`xpurpose`, or the service's `a0purpose`).

    A full-text probe per key name, newest first, stopping at the first hit: no count over the whole set.
    """
    if not flt.include_test:
        return False
    for key in PURPOSE_KEYS:
        probe = replace(flt, text=f"{flt.text} {key}".strip())
        if any(ev.purpose for ev in reader.older(probe, head + 1, 1)):
            return True
    return False


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
