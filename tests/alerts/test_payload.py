"""The rules read an event's `data` from its stored raw JSON the same way whatever shape the text has: msgspec's
quick path where it can, the whole-message decode where it cannot (no `event` object, nesting deeper than msgspec
goes), and an empty mapping where the text holds no readable `data`."""

from __future__ import annotations

import orjson
import pytest

from tenant_events.alerts.payload import raw_data


def _before(raw: str) -> object:
    """How the rules read a payload with orjson alone."""
    try:
        data = orjson.loads(raw)["event"]["data"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def _deep(depth: int) -> str:
    return '{"event": {"data": {"a": ' + "[" * depth + "]" * depth + "}}}"


@pytest.mark.parametrize(
    "raw",
    [
        '{"offset": "AA", "event": {"specversion": "1.0", "type": "user.created", "id": "evt_1",'
        ' "data": {"object": {"user_id": "u1", "email_verified": false, "identities": [{"provider": "x"}]},'
        ' "context": {"client": {"id": "c1"}, "request": {"ip": "203.0.113.9", "geo": {"lat": 52.52}}}},'
        ' "a0tenant": "demo"}}',
        '{"event": {"data": {}}}',
        '{"event": {"data": {"object": null, "n": -9223372036854775808, "f": 1.5e-7, "s": "caf\\u00e9"}}}',
        '{"event": {"data": {"x": 1}, "data": {"y": 2}}}',
        '{"event": {"data": null}}',
        '{"event": {"data": [1, 2]}}',
        '{"event": {"data": "text"}}',
        '{"event": {"type": "user.created"}}',
        '{"event": null}',
        '{"event": [1]}',
        '{"offset": "AA"}',
        "[1, 2]",
        '"event"',
        "null",
        "",
        "{not json",
        '{"event": {"data": {"n": 1e400}}}',
        _deep(200),
        _deep(1100),
    ],
)
def test_reads_data_as_before(raw: str) -> None:
    assert raw_data(raw) == _before(raw)


def test_no_raw_is_no_data() -> None:
    assert raw_data(None) == {}


def _depth(value: object) -> int:
    depth = 0
    while isinstance(value, list):
        value, depth = (value[0] if value else None), depth + 1
    return depth


def test_nesting_msgspec_refuses_is_read_whole() -> None:
    """A payload nested deeper than msgspec decodes, but within what the stream accepts, is still read."""
    data = raw_data(_deep(1000))
    assert list(data) == ["a"]
    assert _depth(data["a"]) == 1000
