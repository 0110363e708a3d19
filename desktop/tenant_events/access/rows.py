"""The review as rows: one a grant (a snapshot) or one a change (a diff), for CSV and JSON lines. The command line
and the window's export write the same columns."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any, Final

import orjson

from tenant_events.access.records import Change, Diff, Grant, Snapshot
from tenant_events.access.words import BEFORE_HISTORY

_ENTITY_COLUMNS: Final = (
    "user",
    "user_id",
    "organization",
    "organization_id",
    "group",
    "group_id",
    "role",
    "role_id",
    "connection",
    "connection_id",
)
GRANT_COLUMNS: Final = ("tenant", "at", "what", *_ENTITY_COLUMNS, "since", "event_id")
CHANGE_COLUMNS: Final = (
    "tenant",
    "from",
    "to",
    "change",
    "what",
    *_ENTITY_COLUMNS,
    "at",
    "event_id",
    "event_type",
    "event",
    "client",
    "client_id",
    "ip",
)


def iso(ms: int | None) -> str:
    """`2026-11-01T12:00:05.000Z`; None (now) as "now"."""
    if ms is None:
        return "now"
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _entities(grant: Grant) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("user", "organization", "group", "role", "connection"):
        entity = getattr(grant, kind)
        out[kind] = entity.label if entity is not None else None
        out[f"{kind}_id"] = entity.id if entity is not None else None
    return out


def grant_row(snapshot: Snapshot, grant: Grant) -> dict[str, Any]:
    return {
        "tenant": snapshot.tenant,
        "at": iso(snapshot.at_ms),
        "what": grant.kind.value,
        **_entities(grant),
        "since": BEFORE_HISTORY if grant.since_ms is None else iso(grant.since_ms),
        "event_id": grant.event_id,
    }


def change_row(diff: Diff, change: Change) -> dict[str, Any]:
    return {
        "tenant": diff.tenant,
        "from": iso(diff.from_ms),
        "to": iso(diff.to_ms),
        "change": change.kind.value,
        "what": change.grant.kind.value,
        **_entities(change.grant),
        "at": iso(change.at_ms),
        "event_id": change.event_id,
        "event_type": change.event_type,
        "event": change.sentence.text if change.sentence is not None else None,
        "client": change.client,
        "client_id": change.client_id,
        "ip": change.ip,
    }


def rows(answer: Snapshot | Diff) -> Iterator[dict[str, Any]]:
    if isinstance(answer, Snapshot):
        return (grant_row(answer, g) for g in answer.grants)
    return (change_row(answer, c) for c in answer.changes)


def write_csv(answer: Snapshot | Diff, out: IO[str]) -> int:
    """A header and one row a grant or change; returns the rows written."""
    columns = GRANT_COLUMNS if isinstance(answer, Snapshot) else CHANGE_COLUMNS
    writer = csv.writer(out)
    writer.writerow(columns)
    count = 0
    for row in rows(answer):
        writer.writerow(["" if row[c] is None else row[c] for c in columns])
        count += 1
    return count


def write_jsonl(answer: Snapshot | Diff, out: IO[str]) -> int:
    count = 0
    for row in rows(answer):
        out.write(orjson.dumps(row).decode() + "\n")
        count += 1
    return count
