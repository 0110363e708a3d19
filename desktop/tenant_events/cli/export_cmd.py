"""`tenant-events export`: every stored event of one tenant, in stored order, as JSONL or CSV.

JSONL lines are stream messages `{"type", "offset", "event"}` exactly as received; CSV has one row per event
with the columns the table shows, its summary the table's sentence (names at the event's time). Safe while
`stream` or the app is writing (it reads a WAL snapshot).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import IO, Any

import orjson

from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.cli.output_file import refuse_database_target, write_output
from tenant_events.cli.stores import known_database, stored_databases
from tenant_events.entities.sentences import export_summaries
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.query import QueryError, parse
from tenant_events.store.health import check_readable, database_errors
from tenant_events.store.reader import EventReader
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view.filtered_export import CSV_COLUMNS, chunked, csv_rows
from tenant_events.view.tenant_reader import TenantReader


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="write every stored event as JSONL or CSV",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done (also when the reader of - stops early, as `| head` does) · 2 usage, "
        "nothing stored or an output path that cannot be written · 3 unknown tenant · 5 storage",
    )
    add_data_dir(p)
    add_tenant(p, "which tenant's database (default: the only one)")
    p.add_argument(
        "--query",
        metavar="QUERY",
        default="",
        help="only events matching QUERY, written as in the window's search line, e.g. "
        "'type:user.* -purpose:test' or 'org:acme OR org:globex'",
    )
    fmt = p.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--jsonl", metavar="PATH|-", help="stream messages, one JSON object a line")
    fmt.add_argument("--csv", metavar="PATH|-", help="one row per event")
    p.set_defaults(run=run)


def jsonl_line(event: StoredEvent, raw: str) -> str:
    """`{"type", "offset", "event"}` from the stored raw `data:` JSON (which carries no `type` on the wire)."""
    data = orjson.loads(raw)
    message = {"type": event.type, "offset": data.get("offset", event.offset), "event": data.get("event")}
    return orjson.dumps(message).decode() + "\n"


def database_for(paths: AppPaths, tenant: str | None) -> Path:
    """The one database a command reads (`--tenant`'s, or the only one), checked before it is read."""
    if tenant:
        return known_database(paths, tenant)
    found = stored_databases(paths)
    if not found:
        raise UserFixableError(f"no stored events in {paths.data_dir}", "run tenant-events stream first")
    if len(found) > 1:
        raise ConfigError(
            "--tenant",
            f"several tenants are stored ({', '.join(p.stem for p in found)})",
            "pick one with --tenant NAME",
        )
    check_readable(found[0])
    return found[0]


def query_filter(query: str) -> EventFilter:
    """The filter for `--query`; a query that cannot run is a usage error naming where and what is wrong."""
    try:
        parse(query)
    except QueryError as exc:
        raise UserFixableError(f"--query {query_span(query, exc.start, exc.end)}: {exc.reason}") from None
    return EventFilter(query=query)


def query_span(query: str, start: int, end: int, room: int = 60) -> str:
    """The query with the part at fault, cut to fit one line: `'a b (c' at characters 5–6 ('(')`."""
    shown = query if len(query) <= room else query[:room] + "…"
    part = query[start:end]
    part = part if len(part) <= 20 else part[:20] + "…"
    return f"{shown!r} at characters {start + 1}–{max(end, start + 1)} ({part!r})"


def _write(reader: EventReader, out: IO[str], as_csv: bool, flt: EventFilter) -> int:
    count = 0
    if as_csv:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        say = export_summaries(TenantReader(reader).directory())  # the table's sentences: names at the time
        for chunk in chunked(e for e, _raw in reader.export_iter(f=flt)):
            writer.writerows(csv_rows(chunk, say))
            count += len(chunk)
    else:
        for e, raw in reader.export_iter(f=flt):
            out.write(jsonl_line(e, raw))
            count += 1
    return count


def run(args: argparse.Namespace) -> int:
    flt = query_filter(args.query)
    paths = AppPaths.resolve(args.data_dir)
    target: str = args.jsonl or args.csv
    refuse_database_target(target, paths=paths)
    database = database_for(paths, args.tenant)
    with database_errors(database), EventReader(database) as reader:
        count = write_output(target, lambda out: _write(reader, out, bool(args.csv), flt))
    if count is None:  # the reader of stdout stopped early
        return 0
    events = "1 event" if count == 1 else f"{count:,} events"
    print(f"tenant-events: exported {events} from {database.stem}", file=sys.stderr)
    return 0
