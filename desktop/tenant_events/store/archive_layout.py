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
from typing import Any, Final

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


@cache
def _paths_by_type() -> Mapping[str, tuple[tuple[tuple[str, ...], ...], ...]]:
    """For each event type, for each field of FIELD_COLUMNS: the key paths whose values the field tests."""
    out: dict[str, tuple[tuple[tuple[str, ...], ...], ...]] = {}
    by_name = {f.name: f for f in FIELDS}
    for event_type in TYPE_NAMES:
        per_field = []
        for name, _column in FIELD_COLUMNS:
            keys = []
            for path in by_name[name].paths:
                applies = path.types is None or any(event_type in types_matching(t) for t in path.types)
                if applies:
                    keys.append(tuple(path.path.removeprefix("$.").split(".")))
            per_field.append(tuple(keys))
        out[event_type] = tuple(per_field)
    return out


def _sql_text(value: object) -> str | None:
    """The text SQLite's lower(json_extract(…)) gives for a JSON value; None for null (no match)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, str):
        return value.translate(_LOWER)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _sqlite_real(value)
    import orjson

    return orjson.dumps(value).decode().translate(_LOWER)


def _sqlite_real(value: float) -> str:
    """SQLite's "%!.15g": like %.15g, always with a decimal point."""
    text = f"{value:.15g}"
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa and "n" not in mantissa:  # not inf / nan
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _at(message: Any, keys: tuple[str, ...]) -> object:
    for key in keys:
        if not isinstance(message, dict):
            return None
        message = message.get(key)
    return message


def field_values(event_type: str, message: object) -> list[list[str]]:
    """The values of every FIELD_COLUMNS field for one event (its parsed `data:` JSON), in column order."""
    plans = _paths_by_type().get(event_type)
    if plans is None:
        return [[] for _ in FIELD_COLUMNS]
    out = []
    for keys in plans:
        values = [_sql_text(_at(message, k)) for k in keys]
        out.append([v for v in values if v is not None])
    return out
