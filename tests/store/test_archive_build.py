"""The archive writer (store/archive_build.py): each file in seq order without sorting a month's rows, and the
query line's field values it stores equal to what the live tier's SQL tests (docs/archive.md "What a file holds")."""

from __future__ import annotations

import gc
import random
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.field_messages import messages
from helpers.history import history
from tenant_events.query.fields import FIELDS, TYPE_NAMES, types_matching
from tenant_events.store import duck
from tenant_events.store._postings import json_lines
from tenant_events.store.archive_build import (
    TOKENS_FILE,
    LiveRow,
    events_select,
    ordered_cursor,
    scratch,
    tokens_select,
    write_chunks,
    write_month,
)
from tenant_events.store.archive_layout import FIELD_COLUMNS, canonical_time, field_values, tokens_name
from tenant_events.store.archive_merge import merge
from tenant_events.store.archive_pairs import MARK as PAIRS

DAY = 86400.0


def _live_rows(n: int, seed: int, first_seq: int = 1) -> list[LiveRow]:
    rows = history(n, time.time() - 40 * DAY, 5.0, seed)
    return [
        (first_seq + i, r.event_id, r.offset, r.type, r.time, r.time_ms, r.source, r.tenant, r.purpose, None, r.raw,
         r.received_at)
        for i, r in enumerate(rows)
    ]  # fmt: skip


def _column(path: Path, column: str) -> list[object]:
    cur = duck.cursor()
    try:
        cur.execute("SET SESSION preserve_insertion_order = true")  # the file's own order
        return [r[0] for r in cur.execute(f"SELECT {column} FROM read_parquet(?)", [str(path)]).fetchall()]
    finally:
        cur.close()


def test_a_file_and_its_tokens_are_in_order_whatever_order_the_rows_came_in(tmp_path):
    rows = _live_rows(3000, seed=3)
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    built = write_month(tmp_path, "2026-01", shuffled)
    assert _column(tmp_path / built.file.name, "seq") == [r[0] for r in rows]
    terms = _column(tmp_path / tokens_name(built.file.name), "term")
    assert terms == sorted(terms) and len(set(terms)) == len(terms)
    lists = _column(tmp_path / tokens_name(built.file.name), "seqs")
    assert all(seqs == sorted(set(seqs)) for seqs in lists)  # type: ignore[call-overload]


def test_a_token_in_more_events_than_a_line_holds_by_default_comes_out_whole(tmp_path):
    """A token's seqs are one line of the scratch file however many (a month of millions of events): the
    writer reads a line longer than DuckDB's JSON reader takes by default (16 MiB, twice that in a pinch)
    whole, in order, and the lines in their order."""
    n = 3_000_000
    first = 10**11  # 13 characters a seq with its comma: 39 million in the line
    rows = [rows_line("#:", [1, 2]), rows_line("common", list(range(first, first + n))), rows_line("e", [3])]
    (tmp_path / TOKENS_FILE).write_bytes(b"".join(rows))
    longest = max(len(line) for line in rows)
    assert longest > 2 * 16_777_216
    cur = ordered_cursor()
    try:
        found = cur.execute(tokens_select(tmp_path, longest)).fetchall()
    finally:
        cur.close()
    assert [(term, k) for term, k, _s in found] == [("#:", 2), ("common", n), ("e", 1)]
    assert found[1][2] == list(range(first, first + n))


def rows_line(term: str, seqs: list[int]) -> bytes:
    return orjson.dumps({"term": term, "n": len(seqs), "seqs": seqs}, option=orjson.OPT_APPEND_NEWLINE)


def _rows_of(path: Path, order: str) -> list[tuple[object, ...]]:
    cur = duck.cursor()
    try:
        return cur.execute(f"SELECT * FROM read_parquet(?) ORDER BY {order}", [str(path)]).fetchall()
    finally:
        cur.close()


def test_a_month_written_a_chunk_at_a_time_is_the_file_its_chunks_merged_make(tmp_path):
    """write_chunks writes a month given in chunks as one file, with what writing each chunk and merging the
    files gives (the same events, tokens and field rows), and refuses chunks out of seq order."""
    rows = _live_rows(3000, seed=8)
    chunks = [rows[k : k + 1000] for k in range(0, 3000, 1000)]
    one = write_chunks(tmp_path / "one", "2026-01", iter(chunks))
    parts = [write_month(tmp_path / "merged", "2026-01", c).file for c in chunks]
    merged = merge(tmp_path / "merged", parts)
    assert (one.file.first_seq, one.file.last_seq, one.file.rows) == (1, 3000, 3000)
    assert _column(tmp_path / "one" / one.file.name, "seq") == [r[0] for r in rows]
    for name, order in ((one.file.name, "seq"), (tokens_name(one.file.name), "term")):
        merged_name = merged.file.name if order == "seq" else tokens_name(merged.file.name)
        # the pairs of tokens are listed from the words of the values seen so far (archive_pairs.py): a merge's
        # from each file's, and one file's as one write of the month's rows lists them
        found, expected = (
            _rows_of(p, order) for p in (tmp_path / "one" / name, tmp_path / "merged" / merged_name)
        )
        assert [r for r in found if not _paired(r)] == [r for r in expected if not _paired(r)]
    whole = write_month(tmp_path / "whole", "2026-01", rows).file.name
    assert _rows_of(tmp_path / "one" / tokens_name(one.file.name), "term") == _rows_of(
        tmp_path / "whole" / tokens_name(whole), "term"
    )
    assert _column(tmp_path / "one" / tokens_name(one.file.name), "term")[0] == "#:"
    with pytest.raises(ValueError, match="follow"):
        write_chunks(tmp_path / "bad", "2026-01", [chunks[1], chunks[0]])


def _paired(row: tuple[object, ...]) -> bool:
    return str(row[0]).startswith(PAIRS)


def _live_sql_values(conn: sqlite3.Connection, event_type: str, raw: str) -> list[list[str]]:
    """Each field's values as the live tier's SQL (store/query_sql.py) tests them: lower(value) over
    json_extract of the field's paths that apply to the type, one path alone or several through json_each."""
    out = []
    for name, _column in FIELD_COLUMNS:
        field = next(f for f in FIELDS if f.name == name)
        paths = [
            p.path
            for p in field.paths
            if event_type in TYPE_NAMES
            and (p.types is None or any(event_type in types_matching(t) for t in p.types))
        ]
        if not paths:
            out.append([])
        elif len(paths) == 1:
            value = conn.execute("SELECT lower(json_extract(?, ?))", (raw, paths[0])).fetchone()[0]
            out.append([] if value is None else [str(value)])
        else:
            marks = ", ".join("?" * len(paths))
            values = conn.execute(
                f"SELECT lower(value) FROM json_each(json_extract(?, {marks}))",
                (raw, *paths),
            ).fetchall()
            out.append([str(v) for (v,) in values if v is not None])
    return out


_HOSTILE = {
    "user_id": "AbC-ÉcOLE",
    "email": True,
    "username": -0.0,
    "name": 1.5,
    "nickname": {"A": [1, "B", None, -0.0]},
    "member": {"id": False},
    "organization": {"id": 1e20, "name": 2.5e-7, "display_name": None},
    "group": {"id": "G-1", "name": "Ω", "organization_id": 100000.0},
    "role": {"id": "R", "name": [3, "X"]},
    "connection": {"id": "CON", "name": "Σx"},
}


def test_the_stored_field_values_are_what_the_live_tier_tests(tmp_path):
    """Every event type of the simulator's tenant life, and values of every JSON kind on each type."""
    rows = _live_rows(4000, seed=5)
    seen = {r[3] for r in rows}
    assert len(seen) >= 20, sorted(seen)  # the simulator makes nearly every type
    hostile = []
    for event_type in TYPE_NAMES:
        message = {"event": {"data": {"object": _HOSTILE, "context": {"request": {"ip": "203.0.113.9"}}}}}
        hostile.append((event_type, orjson.dumps(message).decode()))
    hostile.append(("user.created", '{"event": {"data": {"object": "not an object"}}}'))
    hostile.append(("no.such.type", orjson.dumps({"event": {"data": {"object": _HOSTILE}}}).decode()))
    conn = sqlite3.connect(":memory:")
    try:
        for event_type, raw in [(r[3], r[10]) for r in rows] + hostile:
            assert field_values(event_type, orjson.loads(raw)) == _live_sql_values(conn, event_type, raw), (
                event_type,
                raw,
            )
    finally:
        conn.close()


# no NUL: SQLite's lower() ends its text there; fewer than 15 significant digits: SQLite rounds a 15th
# digit's tie away from zero, Python to even (both as the writer has always stored them)
_texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9).map(
        lambda f: round(f, 3)
    )
    | _texts
)
_messages = messages(_scalars, _texts, lambda _draw, message: orjson.dumps(message).decode())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_messages)
def test_the_field_values_of_random_json_are_what_the_live_tier_tests(case: tuple[str, str]) -> None:
    event_type, raw = case
    conn = sqlite3.connect(":memory:")
    try:
        assert field_values(event_type, orjson.loads(raw)) == _live_sql_values(conn, event_type, raw)
    finally:
        conn.close()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@given(st.integers(min_value=-(70 * 365 * 86_400_000), max_value=230 * 365 * 86_400_000))
def test_the_canonical_time_of_any_millisecond_is_its_iso_text(time_ms: int) -> None:
    moment = _EPOCH + timedelta(milliseconds=time_ms)
    assert canonical_time(time_ms) == moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def test_no_cyclic_collection_walks_the_rows_while_their_records_and_tokens_are_made(tmp_path):
    """The collector is paused over a month's scratch files, and left as it was found afterwards."""
    rows = _live_rows(3000, seed=7)
    runs: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    gc.collect()  # a young generation's count starts at nought: none comes due on the way in
    gc.callbacks.append(seen)
    try:
        scratch([rows], tmp_path)
    finally:
        gc.callbacks.remove(seen)
    assert len(runs) <= 1 and gc.isenabled(), runs  # one young collection comes due as it is turned on again
    gc.disable()
    try:
        scratch([rows], tmp_path)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_records_go_out_as_json_lines_whatever_their_texts_hold(tmp_path):
    """Line breaks, the `,\\n,` the lines are cut at, brackets and line separators in every text of a record: the
    scratch file holds one line per record, and DuckDB reads each record back as it was made."""
    rows = _live_rows(40, seed=9)
    odd = ["a\nb", ",\n,", "},\n,{", "[\n]", "\u2028\u2029", "\\n", '{"x": "\\n"}\n', ""]
    rows = [
        (
            r[0],
            odd[i % len(odd)],
            *r[2:9],
            odd[(i + 1) % len(odd)],
            r[10] if i % 3 else odd[i % len(odd)],
            r[11],
        )
        for i, r in enumerate(rows)
    ]
    scratch([rows[:15], rows[15:]], tmp_path, cues=True)
    lines = (tmp_path / "rows.json").read_bytes().split(b"\n")
    assert lines.pop() == b"" and len(lines) == len(rows)
    assert [orjson.loads(line)["event_id"] for line in lines] == [r[1] for r in rows]
    cur = ordered_cursor()
    try:
        got = cur.execute(f"SELECT seq, event_id, summary, raw FROM ({events_select(tmp_path)})").fetchall()
    finally:
        cur.close()
    assert got == [(r[0], r[1], r[9], r[10]) for r in rows]


@pytest.mark.parametrize(
    "array",
    [b"", b"[", b"]", b'[{"a":1}]', b'[{"a":1}\n]', b"[\n]", b'[{"a":1},\n,]', b'[{"a":1},\n{"b":2},\n]'],
)
def test_only_an_array_of_records_each_followed_by_a_line_break_is_made_lines(array):
    with pytest.raises(ValueError, match="each followed by a line break"):
        json_lines(array)
    assert json_lines(b"[]") == b""
    assert json_lines(b'[{"a":"\\n"},\n,{"b":[1,2]},\n]') == b'{"a":"\\n"}\n{"b":[1,2]}\n'
