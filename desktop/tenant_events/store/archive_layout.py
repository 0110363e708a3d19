"""What one archive file holds, and the values of the query line's fields worked out as an event is archived.

An archive file is one month's events of one stored-seq range, in seq order, as Parquet (zstd):

  seq, time_ms, type, purpose, tenant, source, event_id, stream_offset, received_at  as in the live table
  time        NULL when it is the canonical text of time_ms (always, for events this app stored)
  summary     the table's sentence, as the live tier's indexer made it
  raw         the `data:` JSON as received
  f_<field>   one list per text field of the query line (user, email, org, …): the values the live tier's
              SQL would test for that field on this event type, lower-cased the way SQLite's lower() does
              (ASCII letters only), so the archive answers a field term without reading any JSON

Beside it, its token file (`<name>.tokens.parquet`): one row per token SQLite's full-text tokenizer makes of
the event's id, summary and raw JSON, sorted by token, with the seqs of the events that hold it.
The reasons are in docs/archive.md.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

from tenant_events.query import Kind
from tenant_events.query.fields import FIELDS, TYPE_NAMES, types_matching

if TYPE_CHECKING:
    from tenant_events.store._postings import FieldScan

# zstd's own default level. Measured on 100,000 simulator events (docs/archive.md "Measured"): the events'
# file takes 121 B/event at 3 and 100 at 9, but 9 took 2-3 times as long to write; tokens 48 B/event at either.
ZSTD_LEVEL: Final = 3
ROW_GROUP: Final = 65_536
TOKEN_ROW_GROUP: Final = 16_384  # rows are tokens: small groups let a lookup read little
PARQUET_OPTIONS: Final = (
    f"FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL {ZSTD_LEVEL}, PARQUET_VERSION v2"
)

EVENTS_SUFFIX: Final = ".parquet"
TOKENS_SUFFIX: Final = ".tokens.parquet"
_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def folder_of(database: Path) -> Path:
    """The folder beside a tenant database that holds its archive files."""
    return database.with_name(database.stem + ".archive")


def tokens_name(events_name: str) -> str:
    return events_name.removesuffix(EVENTS_SUFFIX) + TOKENS_SUFFIX


def month_of(time_ms: int) -> str:
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%Y-%m")


def canonical_time(time_ms: int) -> str:
    """The stored text of a time (store/records.py): UTC with milliseconds. Only the day's text comes from
    strftime, once per day: the writer checks every event's time, and strftime per event was most of that."""
    day, rest = divmod(time_ms, 86_400_000)
    seconds, ms = divmod(rest, 1000)
    minutes, second = divmod(seconds, 60)
    return f"{_day_text(day)}{minutes // 60:02d}:{minutes % 60:02d}:{second:02d}.{ms:03d}Z"


@lru_cache(maxsize=64)
def _day_text(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%dT")


# (field name, column name) for every text field that lives in JSON paths: each becomes a list column.
FIELD_COLUMNS: Final = tuple(
    (f.name, f"f_{f.name}") for f in FIELDS if f.kind is Kind.TEXT and f.column is None and f.paths
)


# For one event type: the paths its fields read, grouped by the object that holds them (the keys down to it,
# the keys in it), and for each field of FIELD_COLUMNS the places of its paths in that reading order.
_Plan = tuple[tuple[tuple[tuple[str, ...], tuple[str, ...]], ...], tuple[tuple[int, ...], ...]]


@cache
def _plans() -> Mapping[str, _Plan]:
    """Each event type's plan: a path any of its fields reads is looked up once per event, and each object
    on the way once, however many fields name it."""
    out: dict[str, _Plan] = {}
    by_name = {f.name: f for f in FIELDS}
    for event_type in TYPE_NAMES:
        holders: dict[tuple[str, ...], list[str]] = {}
        per_field = []
        for name, _column in FIELD_COLUMNS:
            keys = []
            for path in by_name[name].paths:
                if path.types is None or any(event_type in types_matching(t) for t in path.types):
                    *parent, leaf = path.path.removeprefix("$.").split(".")
                    leaves = holders.setdefault(tuple(parent), [])
                    if leaf not in leaves:
                        leaves.append(leaf)
                    keys.append((tuple(parent), leaf))
            per_field.append(keys)
        order = [(parent, leaf) for parent, leaves in holders.items() for leaf in leaves]
        places = tuple(tuple(order.index(k) for k in keys) for keys in per_field)
        out[event_type] = (tuple((parent, tuple(leaves)) for parent, leaves in holders.items()), places)
    return out


def _sql_text(value: object) -> str | None:
    """The text SQLite's lower(json_extract(…)) gives for a JSON value; None for null (no match)."""
    if isinstance(value, str):
        return value.lower() if value.isascii() else value.translate(_LOWER)
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _sqlite_real(value)
    import orjson

    return orjson.dumps(value).decode().translate(_LOWER)


def _sqlite_real(value: float) -> str:
    """SQLite's "%!.15g": like %.15g, always with a decimal point; a JSON -0.0 reads as 0.0 there."""
    text = f"{value + 0.0:.15g}"
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa and "n" not in mantissa:  # not inf / nan
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def field_values(event_type: str, message: object) -> list[list[str]]:
    """The values of every FIELD_COLUMNS field for one event (its parsed `data:` JSON), in column order."""
    reader = _reader(event_type)
    return reader(message) if reader is not None else [[] for _ in FIELD_COLUMNS]


def field_values_of(event_type: str, raw: str) -> list[list[str]] | None:
    """field_values read straight from the event's JSON text, without parsing it into Python objects (a quarter
    of the archive writer's CPU went there); None for a text the scan is not sure of (store/field_scan.c), for
    field_values of the parsed JSON instead."""
    scan = _scan(event_type)
    return scan.scan(raw) if scan is not None else [[] for _ in FIELD_COLUMNS]


@cache
def _scan(event_type: str) -> FieldScan | None:
    plan = _plans().get(event_type)
    if plan is None:
        return None
    from tenant_events.store._postings import FieldScan

    holders, places = plan
    return FieldScan(holders, places, _sql_text)


_Reader = Callable[[object], list[list[str]]]


@cache
def _reader(event_type: str) -> _Reader | None:
    """The event type's plan (_plans) written out as one function of straight-line lookups: the archive's
    writer calls it for every event, and a loop over the plan's tuples cost more than the values themselves
    (docs/archive.md "What a file holds"). Each object on the way is looked up once; a text value is lower-cased
    inline when it is an ASCII str, any other value goes through _sql_text."""
    plan = _plans().get(event_type)
    if plan is None:
        return None
    holders, places = plan
    lines = ["def read(m):"]
    nodes: dict[tuple[str, ...], str] = {(): "m"}
    texts = 0
    for parent, leaves in holders:
        for depth in range(1, len(parent) + 1):
            if parent[:depth] not in nodes:
                above, name = nodes[parent[: depth - 1]], f"n{len(nodes)}"
                lines.append(
                    f"    {name} = {above}.get({parent[depth - 1]!r}) if isinstance({above}, dict) else None"
                )
                nodes[parent[:depth]] = name
        node, first = nodes[parent], texts
        lines.append(f"    if isinstance({node}, dict):")
        for leaf in leaves:
            lines.append(f"        x = {node}.get({leaf!r})")
            lines.append(
                f"        t{texts} = x.lower() if x.__class__ is str and x.isascii() else None if x is None else sql_text(x)"
            )
            texts += 1
        lines.append("    else:")
        lines.append("        " + " = ".join(f"t{i}" for i in range(first, texts)) + " = None")
    out = []
    for field in places:
        if not field:
            out.append("[]")
        elif len(field) == 1:
            out.append(f"[t{field[0]}] if t{field[0]} is not None else []")
        else:
            out.append(f"[v for v in ({', '.join(f't{i}' for i in field)}) if v is not None]")
    lines.append("    return [" + ", ".join(f"({o})" for o in out) + "]")
    scope: dict[str, object] = {"sql_text": _sql_text}
    exec(compile("\n".join(lines), f"<fields of {event_type}>", "exec"), scope)  # noqa: S102
    return cast(_Reader, scope["read"])
