"""The field values read straight from an event's JSON text (archive_layout.field_values_of, store/field_scan.c)
held to the values of the parsed JSON (field_values over orjson, which the live tier's SQL is held to in
test_archive_build): the simulator's events, JSON of every kind at every path the fields read, spaced and
escaped otherwise, hostile and broken text, and random edits of real events. Where the scan is not sure it says
so (None) and the writer parses the JSON instead; it must never answer for text orjson refuses."""

from __future__ import annotations

import json
import random
import re

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.field_messages import messages, paths_of
from helpers.history import history
from tenant_events.query.fields import TYPE_NAMES
from tenant_events.store._postings import FieldScan
from tenant_events.store.archive_build import _record
from tenant_events.store.archive_layout import FIELD_COLUMNS, _sql_text, field_values, field_values_of

_NONE = [[] for _ in FIELD_COLUMNS]


def _parsed_values(event_type: str, raw: str) -> tuple[bool, list[list[str]]]:
    """Whether orjson reads `raw`, and the values the writer files when it parses it."""
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False, field_values(event_type, None)
    return True, field_values(event_type, message)


def _agrees(event_type: str, raw: str) -> bool:
    """The scan's answer is the parsed JSON's, or none; the writer's record holds the parsed JSON's values either
    way. True when the scan answered."""
    readable, want = _parsed_values(event_type, raw)
    got = field_values_of(event_type, raw)
    assert got is None or (got == want and (readable or event_type not in TYPE_NAMES)), (
        event_type,
        raw,
        got,
        want,
    )
    assert _record((1, "e", "o", event_type, "t", 0, "s", "t", "p", None, raw, 0.0), "")[1] == want
    return got is not None


def test_the_simulators_events_are_read_without_parsing_and_agree():
    rows = history(4000, 1_700_000_000.0, 5.0, 11)
    assert len({r.type for r in rows}) >= 20
    assert all(_agrees(r.type, r.raw) for r in rows)  # every one answered by the scan


_KINDS = [
    "null", "true", "false", "0", "-0", "7", "-12", "123456789012345678", "1234567890123456789",
    "99999999999999999999999", "1.5", "-0.0", "0.1", "1e2", "1E-2", "2.5e+10", "1e99", "1e100", "1e400",
    "-1e-400", "123456789.123456789", '""', '"Ada"', '"ADA Lovelace"', '"Émile Zola"', '"ΣΑΣ"', '"😀 x"',
    '"a\\"b"', '"a\\\\b"', '"tab\\tin"', '"\\u0041BC"', '"\\ud800"', '"\\/x"', "[]", '["a"]', "{}",
    '{"id": "x"}', "[1, [2, {}]]",
]  # fmt: skip


@pytest.mark.parametrize("kind", _KINDS)
def test_a_value_of_each_json_kind_at_every_path_agrees(kind):
    answered = 0
    for event_type in sorted(TYPE_NAMES):
        for keys in paths_of(event_type):
            text = kind
            for key in reversed(keys):
                text = f'{{"{key}": {text}}}'
            answered += _agrees(event_type, text)
            answered += _agrees(event_type, text.replace(": ", ":\n\t "))
    # plain strings, numbers and literals are read by the scan; escapes, objects, arrays, numbers past 18 digits
    # or with an exponent of three are left to orjson
    unsure = "\\" in kind or kind.startswith(("[", "{")) or re.search(r"[0-9]{19}|e-?[0-9]{3}", kind)
    assert (answered > 0) == (not unsure), kind


_BROKEN = [
    "", " ", "{", "}", "{}", "[]", "null", '"x"', "{,}", '{"event": }', '{"event": {"data": 1,}}',
    '{"event": {"data": {"object": {"id": "a"}}}} x', '{"event": {"data": {"object": {"id": "a"}}}}}',
    '{"event": {"data": {"object": {"id": \'a\'}}}}', '{"event": {"data": {"object": {"id": "a\x01"}}}}',
    '{"event": {"data": {"object": {"id": NaN}}}}', '{"event": {"data": {"object": {"id": 01}}}}',
    '{"event": {"data": {"object": {"id": 1.}}}}', '{"event": {"data": {"object": {"id": .5}}}}',
    '{"event": {"data": {"object": {"id": +1}}}}', '{"event": {"data": {"object": {"id": tru}}}}',
    '{"event": {"data": {"object": {"id": "a"} /* c */}}}', '{"event" {"data": {}}}', "\ufeff{}",
    '{"event": {"data": {"object": {"id": "a", "id": "b"}}}}',
    '{"event": {"data": {"object": {"id": "a"}}, "data": {"object": {"id": "b"}}}}',
    '{"event": {"data": {"object": "x"}, "data": {"object": {"id": "b"}}}}',
    '{"event": {"data": {"object": {"i\\u0064": "a"}}}}', '{"event": {"data": {"object": {"\\"": "a"}}}}',
    '{"event": {"data": {"object": {"id": "a"}}}, "other": [' + "[" * 300 + "]" * 300 + "]}",
    '{"event": {"data": {"object": {"id": "a"}}}, "x": "\ud800"}',
    '{"event": {"data": {"object": {"id": "\\uDC00x"}}}}', '{"event": {"data": {"object": {"id": "é"}}}}',
    '  {"event": {"data": {"object": {"id": "A"}}}}  \n', '{"event": null}', '{"event": {"data": []}}',
    '{"event": {"data": {"object": {"id": "a",}}}}', '{"event": {"data": {"object": {"id" "a"}}}}',
] + [
    # broken where nothing is read: the rest of the text is what the scan would read
    f'{{"event": {{"data": {{"object": {{"id": "A"}}, "x": {x}}}}}}}'
    for x in ("[1,]", '{"a": 1,}', "[,1]", '{"a" 1}', "{1: 2}", "[1 2]", '"a\x1f"', '"\\x"', "1e", "-", "1.e5",
              "[}", '{"a": 1]', "[1", '"open', "nul", "True", "0x10", "1_000", "Infinity", "[1]]", "\"\"")
]  # fmt: skip


@pytest.mark.parametrize("raw", _BROKEN)
def test_broken_and_hostile_text_is_never_read_otherwise_than_orjson_reads_it(raw):
    for event_type in ("user.created", "group.member.added", "organization.member.added", "no.such.type"):
        _agrees(event_type, raw)


def test_random_edits_of_real_events_are_never_read_otherwise():
    """Characters that matter to JSON put in, taken out and swapped at random places of the simulator's events."""
    rng = random.Random(5)
    rows = history(600, 1_700_000_000.0, 5.0, 12)
    alphabet = [*'{}[]":,\\ \t\n0123456789-+.eEtrufalsnAÉ\x00\x1f', "\\u00", '"id"', '"name"']
    answered = 0
    for row in rows:
        for _ in range(25):
            raw = row.raw
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(raw) + 1)
                what = rng.random()
                if what < 0.4:
                    raw = raw[:at] + rng.choice(alphabet) + raw[at:]
                elif what < 0.7:
                    raw = raw[:at] + raw[at + rng.randint(1, 4) :]
                else:
                    raw = raw[:at] + rng.choice(alphabet) + raw[at + 1 :]
            answered += _agrees(row.type, raw)
    assert answered > 1000  # many edits leave valid JSON (inside a string, say) that the scan still reads


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _texts
)


def _spaced(draw: st.DrawFn, message: dict[str, object]) -> str:
    """The message as json.dumps writes it, spaced and escaped at random."""
    indent = draw(st.sampled_from([None, 0, 2, "\t"]))
    return json.dumps(message, ensure_ascii=draw(st.booleans()), indent=indent)


_messages = messages(_scalars, _texts, _spaced)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_messages)
def test_random_json_at_the_fields_paths_agrees(case: tuple[str, str]) -> None:
    _agrees(*case)


def test_a_scan_is_made_from_a_plan_and_refuses_a_bad_one():
    scan = FieldScan(((("a",), ("b", "c")), ((), ("d",))), ((0,), (1, 2), ()), _sql_text)
    assert scan.scan('{"a": {"b": "X", "c": 5}, "d": true}') == [["x"], ["5", "1"], []]
    assert scan.scan('{"a": {"b": "X"}, "a": {}}') is None  # given twice: left to orjson
    assert scan.scan("{") is None
    with pytest.raises(TypeError):
        scan.scan(b"{}")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no value read"):
        FieldScan(((("a",), ("b",)),), ((3,),), _sql_text)
    with pytest.raises(TypeError):
        FieldScan(((("a",), (1,)),), ((0,),), _sql_text)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="too many keys"):
        FieldScan(((((), tuple(f"k{i}" for i in range(80))),)), ((),), _sql_text)

    def failing(value: object) -> str | None:
        raise RuntimeError("no text")

    with pytest.raises(RuntimeError, match="no text"):
        FieldScan(((("a",), ("b",)),), ((0,),), failing).scan('{"a": {"b": 1}}')
