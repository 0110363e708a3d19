"""Export what the window shows (one tenant, the current filter, up to the table's head) as JSONL or CSV.

Blocking: run it on a worker thread with its own reader. Rows are read oldest first in chunks of matching events
(the store runs the filter); their raw JSON is read per chunk by seq range when the matches are dense, else one
by one. The file is written beside the target and renamed into place, so a cancelled or failed export leaves
no half file. JSONL lines are the same as `tenant-events export` writes; CSV has the same columns, its summary
the sentence the table shows (names at the event's time), made a chunk at a time by `summaries` (the caller's:
entities/sentences.py `summaries` over the tenant's directory).
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from tenant_events.errors import UserFixableError
from tenant_events.paths import database_file_named
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view.event_text import jsonl_line
from tenant_events.view.tenant_reader import TenantReader

Format = Literal["jsonl", "csv"]
Summaries = Callable[[Sequence[StoredEvent]], list[str]]  # each event's Summary cell, as the table says it
CHUNK = 2000
DENSE = 4  # read raw by seq range when the chunk's seq span is at most DENSE × its rows
CSV_COLUMNS = (
    "seq",
    "time",
    "type",
    "event_id",
    "summary",
    "source",
    "tenant",
    "purpose",
    "offset",
    "received_at",
)


class ExportCancelled(Exception):
    """The user cancelled; nothing was written."""


def format_for(path: str | Path) -> Format:
    return "csv" if str(path).lower().endswith(".csv") else "jsonl"


def rows_with_raw(
    reader: TenantReader, flt: EventFilter, head: int
) -> Iterator[list[tuple[StoredEvent, str]]]:
    """Chunks of matching events with seq <= head, oldest first, each with its raw JSON."""
    after = 0
    while True:
        chunk = reader.newer(flt, after, head, CHUNK)  # newest first
        if not chunk:
            return
        chunk.reverse()
        first, last = chunk[0].seq, chunk[-1].seq
        if last - first + 1 <= DENSE * len(chunk):
            raws = {ev.seq: raw for ev, raw in reader.range_raw(first, last)}
            out = [(ev, raws[ev.seq]) for ev in chunk if ev.seq in raws]
        else:
            out = []
            for ev in chunk:
                full = reader.get(ev.seq)
                if full is not None and full.raw is not None:
                    out.append((ev, full.raw))
        yield out
        after = last


def export_view(
    reader: TenantReader,
    flt: EventFilter,
    head: int,
    target: Path,
    fmt: Format,
    summaries: Summaries,
    progress: Callable[[int], bool] = lambda _n: True,
) -> int:
    """Write the matching events to `target`; `progress(done)` after each chunk returns False to cancel.
    UserFixableError, before anything is written, when `target` is one of the databases beside the tenant's."""
    named = database_file_named(target, reader.path.parent)
    if named is not None:
        raise UserFixableError(
            f"{target} is {named.name}, a database file of Tenant Events: exporting there would destroy it",
            "pick another file",
        )
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            writer = _csv_writer(out) if fmt == "csv" else None
            for chunk in rows_with_raw(reader, flt, head):
                if writer is not None:
                    writer.writerows(csv_rows([ev for ev, _raw in chunk], summaries))
                else:
                    out.writelines(jsonl_line(ev.type, ev.offset, raw) for ev, raw in chunk)
                count += len(chunk)
                if not progress(count):
                    raise ExportCancelled
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def _csv_writer(out: IO[str]) -> Any:
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    return writer


def csv_rows(events: Sequence[StoredEvent], summaries: Summaries) -> list[tuple[object, ...]]:
    """CSV rows of a chunk of events, their summaries made in one go."""
    return [csv_row(e, said) for e, said in zip(events, summaries(events), strict=True)]


def chunked(items: Iterable[StoredEvent], size: int = CHUNK) -> Iterator[list[StoredEvent]]:
    chunk: list[StoredEvent] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def csv_row(e: StoredEvent, summary: str) -> tuple[object, ...]:
    """One CSV row, in CSV_COLUMNS order: the window's export and `tenant-events export --csv` write the same."""
    return (
        e.seq,
        e.time,
        e.type,
        e.event_id,
        summary,
        e.source,
        e.tenant,
        e.purpose or "",
        e.offset,
        f"{e.received_at:.3f}",
    )
