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
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Final, cast

from tenant_events.query import Kind
from tenant_events.query.fields import FIELDS, TYPE_NAMES, types_matching

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
    """The stored text of a time (store/records.py): UTC with milliseconds."""
    moment = datetime.fromtimestamp(time_ms // 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{time_ms % 1000:03d}Z"


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
    plan = _plans().get(event_type)
    if plan is None:
        return [[] for _ in FIELD_COLUMNS]
    holders, places = plan
    texts: list[str | None] = []
    for parent, leaves in holders:
        node = message
        for key in parent:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            texts.extend([_sql_text(node.get(leaf)) for leaf in leaves])
        else:
            texts.extend([None] * len(leaves))
    out: list[list[str]] = []
    for field in places:
        values = [texts[i] for i in field]
        out.append([v for v in values if v is not None] if None in values else cast(list[str], values))
    return out
