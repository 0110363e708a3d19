"""`tenant-events timeline OBJECT`: every stored event that names one user, organization, group, role or connection,
oldest first, across every stored tenant (or one with --tenant), then what is known about it at the end.

OBJECT is user:ID, email:ADDRESS, org:ID, group:ID, role:ID or connection:ID; an organization, group, role or
connection may also be given by its name, or by a name it had before a rename (the timeline then says which it
found: org:Globex (formerly Initech)); each event is said with the names at its time, as the event table says it.
With --jsonl the events are written as stream messages exactly as received (as `export` writes them), and the
state goes to stderr when the events go to stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import IO, Any

from tenant_events.cli.export_cmd import jsonl_line
from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.cli.output_file import cannot_write, refuse_database_target
from tenant_events.cli.stores import tenant_stores
from tenant_events.entities.objects import FORMS, ObjectSpec, parse_object
from tenant_events.entities.sentences import describe_stored
from tenant_events.entities.state_text import state_lines
from tenant_events.entities.timeline import TimelineEntry, Timelines, resolved_as
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.store.health import database_errors
from tenant_events.store.reindex import upgrade


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "timeline",
        help="everything stored about one user, organization, group, role or connection",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 bad OBJECT or nothing stored names it · 3 unknown tenant · 5 storage",
    )
    add_data_dir(p)
    p.add_argument("object", metavar="OBJECT", help=FORMS)
    add_tenant(p, "only this tenant (default: every stored tenant)")
    p.add_argument(
        "--jsonl", metavar="PATH|-", help="write the events as stream messages, one JSON object a line"
    )
    p.set_defaults(run=run)


def _sentences(timelines: Timelines, entries: list[TimelineEntry]) -> list[str]:
    """Each entry's summary sentence as the event table says it (names at the event's time), the stored summary
    for an event the directory cannot read; a few directory lookups per tenant."""
    out = [e.event.summary for e in entries]
    for tenant in {e.tenant for e in entries}:
        mine = {e.event.seq: i for i, e in enumerate(entries) if e.tenant == tenant}
        for seq, sentence in describe_stored(timelines.directory(tenant), mine).items():
            out[mine[seq]] = sentence.text
    return out


def _write_text(out: IO[str], entries: list[TimelineEntry], sentences: list[str]) -> None:
    for entry, sentence in zip(entries, sentences, strict=True):
        e = entry.event
        # The sentence quotes event fields: the tenant's words, escaped (server_text.py).
        out.write(shown(f"{e.time}  {entry.tenant}  {e.type}  {sentence}  [{e.event_id}]", None) + "\n")


def _state(timelines: Timelines, spec: ObjectSpec, entities: list[Any], out: IO[str]) -> None:
    states = timelines.states(entities)
    if not states:
        out.write(f"\nNothing in the entity directory describes {spec} yet.\n")
    for tenant, state in states:
        out.write(f"\nState at the end, in {tenant}:\n")
        out.writelines(shown(line, None) + "\n" for line in state_lines(state))
        behind = timelines.directory(tenant).unindexed()
        if behind:
            out.write(
                f"  ({behind} newer stored events are not in the directory yet: they are being indexed)\n"
            )


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:  # `| head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    spec = parse_object(args.object)
    paths = AppPaths.resolve(args.data_dir)
    refuse_database_target(args.jsonl, paths=paths)
    stores = tenant_stores(paths, args.tenant)
    where = next(iter(stores.values())) if len(stores) == 1 else ", ".join(map(str, stores.values()))
    with database_errors(where):
        return _write(args, spec, stores)


def _write(args: argparse.Namespace, spec: ObjectSpec, stores: dict[str, Path]) -> int:
    for path in stores.values():
        upgrade(path)  # a database from an earlier version gets its directory first
    with Timelines(stores) as timelines:
        entities = timelines.resolve(spec)
        if not entities:
            raise UserFixableError(
                f"no stored user has the email {spec.text!r}", "check the address, or use user:ID"
            )
        entries = list(timelines.everything(entities))
        found = resolved_as(spec, entities)
        if not entries and not timelines.states(entities):
            raise UserFixableError(
                f"no stored event names {found} in {', '.join(stores)}",
                f"check the id; an object can also be named by its name ({FORMS})",
            )
        if args.jsonl == "-":
            sys.stdout.writelines(jsonl_line(e.event, e.event.raw or "{}") for e in entries)
            _state(timelines, spec, entities, sys.stderr)
        elif args.jsonl:
            try:
                with Path(args.jsonl).open("w", encoding="utf-8") as target:
                    target.writelines(jsonl_line(e.event, e.event.raw or "{}") for e in entries)
            except OSError as exc:
                raise cannot_write(args.jsonl, exc) from None
            _state(timelines, spec, entities, sys.stdout)
        else:
            _write_text(sys.stdout, entries, _sentences(timelines, entries))
            _state(timelines, spec, entities, sys.stdout)
    sys.stdout.flush()
    named = "1 event names" if len(entries) == 1 else f"{len(entries):,} events name"
    print(f"tenant-events: {named} {found}", file=sys.stderr)
    return 0
