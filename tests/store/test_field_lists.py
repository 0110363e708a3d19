"""The field rows made in C (archive_fields.FieldRows over _postings.FieldLists) held, byte for byte, to the
Python that made them before (kept here as the reference): the simulator's events and hostile ones (NULs,
escapes, quotes, backslashes, control characters, letters past ASCII whose lower-casing changes their length,
emoji, empty, shared and very long values); the values each event's JSON may spell otherwise; refused input."""

from __future__ import annotations

import bisect
import io
import random
import re
import time
from collections.abc import Collection, Iterable, Mapping, Sequence

import orjson
import pytest

from helpers.history import history, live_rows
from tenant_events.store._postings import FieldLists
from tenant_events.store.archive_build import _record
from tenant_events.store.archive_fields import (
    _EMAIL,
    _EVERY_WORD,
    _PIECE,
    _SHARED_KEY,
    _USER,
    COVER,
    MARK,
    SPELLED,
    FieldRows,
)
from tenant_events.store.archive_layout import FIELD_COLUMNS

# The reference: the field rows as Python made them, spelled_values and FieldRows.add, _targets, _rests and write.

_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_RUN_RX = re.compile(r"[a-z0-9\x80-\U0010ffff]+")
_PIECE_AT = re.compile(f".{{0,{_PIECE - 1}}}[0-9]")
_JOINT = -1


def spelled_values(raw: str, fields: Sequence[Sequence[str]]) -> list[str]:
    out: list[str] = []
    lowered: str | None = None
    for values in fields:
        for value in values:
            if "\x00" in value:
                value = value.split("\x00", 1)[0]
            quoted = f'"{value}"'
            if quoted in raw:
                if not _ESCAPED.search(value):
                    continue
            else:
                if lowered is None:
                    lowered = raw.lower()
                if quoted in lowered and not _ESCAPED.search(value):
                    continue
            out.append(value)
    return out


def _rests(value: str, every: bool) -> tuple[str, ...]:
    starts = [m.start() for m in _RUN_RX.finditer(value)]
    ends = starts[1:] + [len(value)] * bool(starts)
    return tuple(
        value[at:]
        for k, (at, end) in enumerate(zip(starts, ends, strict=True))
        if k == 0 or every or not _PIECE_AT.match(value, at, end)
    )


class PythonRows:
    def __init__(self) -> None:
        self._rows: dict[str, list[int]] = {}
        self._seqs: list[int] = []

    def add(self, seq: int, fields: Sequence[Sequence[str] | None], spelled: Collection[str]) -> None:
        self._seqs.append(seq)
        user, email = fields[_USER], fields[_EMAIL]
        for at, values in enumerate(fields):
            for value in values or ():
                f = at
                if at == _USER and email and value in email:
                    f = _JOINT
                elif at == _EMAIL and user and value in user:
                    continue
                odd = bool(spelled) and value.split("\x00", 1)[0] in spelled
                name = _SHARED_KEY if f == _JOINT else FIELD_COLUMNS[f][0]
                head = f"{MARK}{SPELLED if odd else ''}{name}:"
                for rest in _rests(value.split("\x00", 1)[0], name in _EVERY_WORD):
                    seqs = self._rows.setdefault(head + rest, [])
                    if not seqs or seqs[-1] != seq:
                        seqs.append(seq)

    def write(self, f: io.BytesIO, counted: Mapping[str, int], lines: Iterable[bytes], lines_at: str) -> int:
        rows = dict(self._rows)
        rows[COVER] = self._seqs
        longest = 0
        terms = sorted(rows.keys() | counted.keys())
        cut = bisect.bisect_left(terms, lines_at) if lines_at else len(terms)
        for k, term in enumerate(terms):
            if k == cut:
                f.writelines(lines)
            seqs = rows.get(term)
            row = (
                {"term": term, "n": counted[term], "seqs": []}
                if seqs is None
                else {"term": term, "n": len(seqs), "seqs": seqs}
            )
            line = orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)
            f.write(line)
            longest = max(longest, len(line))
        if cut == len(terms):
            f.writelines(lines)
        return longest


# The events: (seq, raw, values of each field).
Event = tuple[int, str, list[list[str] | None]]
_PAIRS = [b'{"term":"#|#","n":3,"seqs":[]}\n', b'{"term":"#|a b","n":1,"seqs":[2]}\n']


def _both(events: Sequence[Event], counted: Mapping[str, int], lines_at: str) -> tuple[bytes, bytes]:
    """The rows of `events` (with `counted` and the pair lines at `lines_at`) as FieldRows writes them and as the
    reference did, each event's spelled values held to the reference's on the way."""
    made, reference = FieldRows(), PythonRows()
    for seq, raw, values in events:
        spelled = made.add(seq, raw, values)
        assert spelled == spelled_values(raw, [v or [] for v in values]), (raw, values)
        reference.add(seq, values, spelled)
    out, expected = io.BytesIO(), io.BytesIO()
    longest = made.write(out, counted, iter(_PAIRS), lines_at)
    assert longest == reference.write(expected, counted, _PAIRS, lines_at)
    return out.getvalue(), expected.getvalue()


def _simulated(n: int, seed: int) -> list[Event]:
    now = time.time()
    rows = live_rows(history(n, now - 40 * 86400, 40 * 86400 / n, seed=seed))
    records = [_record(r, "")[0] for r in rows]  # (the summary is not read here)
    return [
        (rec["seq"], rec["raw"], [rec[c] for _n, c in FIELD_COLUMNS])  # type: ignore[misc]
        for rec in records
    ]


@pytest.mark.parametrize("seed", [3, 12])
def test_the_simulators_events_give_the_references_rows_byte_for_byte(seed: int) -> None:
    events = _simulated(3000, seed)
    counted = {"#~1": 5, "#~2|user.created": 9, "#user:zz": 1}  # the last beside the rows' own terms
    for lines_at in ("#|", ""):
        made, expected = _both(events, counted, lines_at)
        assert made == expected
    assert made.count(b"\n") > 1000 and b'"#user&email:' in made


# pieces of values and of the JSON around them: escapes, controls, letters whose lower-casing changes
# their length or leaves ASCII, emoji, identifiers' pieces, separators
_PIECES = (
    "ada",
    "Ada",
    "ADA",
    "lovelace",
    "5",
    "57",
    "x9",
    "ab1",
    "-",
    ".",
    "@",
    " ",
    "|",
    "_",
    "\x00",
    "\n",
    "\t",
    "\r",
    "\b",
    "\f",
    "\x01",
    "\x1f",
    "\x7f",
    '"',
    "\\",
    "\\u0041",
    "é",
    "É",
    "İ",
    "i\u0307",
    "ẞ",
    "ß",
    "\u212a",
    "Ω",
    "東京",
    "😀",
    "\u2028",
    "\u00e97",
    "'",
)


def _value(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 7)))


def _spelled_as(rng: random.Random, value: str) -> str:
    """The value as an event's JSON may hold it: as it is, upper-cased (past ASCII too), escaped, or cut."""
    way = rng.random()
    if way < 0.4:
        return f'"{value}"'
    if way < 0.6:
        return f'"{value.upper()}"'
    if way < 0.8:
        return orjson.dumps(value).decode()
    return f'"{value[: len(value) // 2]}'


def _hostile(rng: random.Random, n: int, long: bool = False) -> list[Event]:
    names = len(FIELD_COLUMNS)
    events: list[Event] = []
    for k in range(n):
        values: list[list[str] | None] = [
            [_value(rng) for _ in range(rng.randint(0, 3))] if rng.random() < 0.5 else []
            for _c in range(names)
        ]
        if rng.random() < 0.4:
            shared = _value(rng)
            for column in (_USER, _EMAIL):
                values[column].append(shared)  # type: ignore[union-attr]
        if rng.random() < 0.1:
            values[rng.choice((_USER, _EMAIL))] = None
        if long:
            values[rng.randrange(names)] = ["".join(rng.choice(_PIECES) for _ in range(3000))]
        held = [v for vs in values for v in vs or ()]
        parts = [_spelled_as(rng, v) for v in held if rng.random() < 0.8]
        parts += [orjson.dumps(_value(rng)).decode() for _ in range(rng.randint(0, 2))]
        rng.shuffle(parts)
        raw = "{" + ", ".join(f'"k{i}": {p}' for i, p in enumerate(parts)) + "}"
        if rng.random() < 0.5:
            raw = raw.encode("ascii", "backslashreplace").decode()  # an ASCII JSON of the same values
        events.append((k * 3 + 1, raw, values))
    return events


@pytest.mark.parametrize("seed", range(4))
def test_hostile_events_give_the_references_rows_byte_for_byte(seed: int) -> None:
    events = _hostile(random.Random(seed), 2500)
    made, expected = _both(events, {"#~x": 2, "#:": 7}, "#|")
    assert made == expected
    assert b'"#!' in made and b"\\n" in made and "İ".lower().encode() in made


def test_very_long_values_give_the_references_rows() -> None:
    made, expected = _both(_hostile(random.Random(9), 40, long=True), {}, "")
    assert made == expected


def test_values_the_json_may_spell_otherwise_are_returned_as_the_reference_found_them() -> None:
    raw = r'{"a": "Ada", "b": "x\ny", "c": "\u0051zvx", "d": "ab\u0000 cd", "e": "say \"hi\"", "f": 5}'
    fields: list[list[str] | None] = [[] for _ in FIELD_COLUMNS]
    fields[0], fields[1], fields[2], fields[3] = ["ada", "x\ny"], ["qzvx"], ["ab\x00 cd", 'say "hi"'], ["5"]
    rows = FieldRows()
    assert rows.add(1, raw, fields) == ["x\ny", "qzvx", "ab", 'say "hi"', "5"]
    fields[0:4] = [["i̇stanbul"], ["ada lovelace"], [""], []]
    assert rows.add(2, '{"a": "İSTANBUL", "b": "ADA LOVELACE", "c": ""}', fields) == []
    assert rows.add(3, '{"a": "İstanbul"}', fields) == ["ada lovelace", ""]


def test_no_events_give_the_cover_row_alone() -> None:
    made, expected = _both([], {}, "#|")
    assert made == expected == b'{"term":"#:","n":0,"seqs":[]}\n' + b"".join(_PAIRS)


def test_what_the_field_rows_refuse_is_said_and_changes_nothing() -> None:
    rows = FieldRows()
    empty: list[list[str] | None] = [[] for _ in FIELD_COLUMNS]
    good = [["ada"], *empty[1:]]
    rows.add(5, '{"a": "ada"}', good)
    for seq, raw, values, error in (
        (5, "{}", good, ValueError),  # not above the seq before
        (6, "{}", good[:-1], ValueError),  # a field short
        (6, "{}", [[b"ada"], *empty[1:]], TypeError),
        (6, "{}", [[1], *empty[1:]], TypeError),
        (6, "{}", [5, *empty[1:]], TypeError),
        (6, b"{}", good, TypeError),
        (6, "{}", [["\ud800"], *empty[1:]], UnicodeEncodeError),
        (6, "{\ud800}", good, UnicodeEncodeError),
    ):
        with pytest.raises(error):
            rows.add(seq, raw, values)  # type: ignore[arg-type]
    out = io.BytesIO()
    rows.write(out)
    assert out.getvalue() == b'{"term":"#:","n":1,"seqs":[5]}\n{"term":"#user:ada","n":1,"seqs":[5]}\n'
    with pytest.raises(RuntimeError):
        rows.add(6, "{}", good)
    with pytest.raises(RuntimeError):
        FieldLists.__new__(FieldLists).add(1, "{}", good)
