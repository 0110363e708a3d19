"""Field values whose characters a server's JSON encoder writes as `\\u` escapes: .NET's default encoder writes
`'`, `+` and `` ` `` that way (as well as HTML's `<>&`), Gson `=`, many every character past ASCII, so "O'Brien"
arrives as `O\\u0027Brien` and "ada+x@example.com" as `ada\\u002Bx@example.com`. Both tiers find such values,
by field, free text and phrase, and answer as one store."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import duckdb
import orjson

from helpers.archive_pairs import answers, store_rows, tiered_pair
from helpers.history import history
from tenant_events.store import (
    EventReader,
    EventRow,
    StoreWriter,
    archive_build,
    archive_move,
    indexer,
    timeline_query,
)
from tenant_events.store.fts_text import DECODED_RAW_SQL, indexed_raw
from tenant_events.values.events import EventFilter
from tenant_events.values.team_archive import Lake

DAY = 86400.0
NOW = time.time()
# (the name as the JSON spells it, a query that must find it)
ESCAPED = (
    (r"Percy O\u0027Qzvb", "user:o'qzvb"),
    (r"ada\u002Bqzvm@example.com", "user:ada+qzvm@example.com"),
    (r"tick\u0060qzvt", "user:tick`qzvt"),
    (r"Zed \u0026 Qzvd", 'user:"zed & qzvd"'),
    (r"Ren\u00e9 Qzvr", 'user:"rené qzvr"'),
    (r"tok\u003dqzve", "user:tok=qzve"),
    (r"Qzvp \u003cQzvq\u003e", 'user:"qzvp <qzvq>"'),
    (r"ops\/qzvs", "user:ops/qzvs"),  # PHP's `\/`
)
# free text and phrases of the names as they read
TEXTS = (
    ("o'qzvb", '"o qzvb"', '"percy o\'qzvb"'),
    ("ada+qzvm", '"ada qzvm"'),
    ("tick`qzvt",),
    ('"zed qzvd"', '"zed & qzvd"', "zed&qzvd"),
    ('"rené qzvr"', '"rene qzvr"', "rené"),
    ("tok=qzve", '"tok qzve"'),
    ('"qzvp qzvq"', "<qzvq>"),
    ('"ops qzvs"',),
)


def _rows() -> tuple[list[EventRow], list[tuple[int, int]]]:
    """A history with one archived and one live user event of each name; (old, new) index pairs of them."""
    rows = history(300, NOW - 60 * DAY, 60 * DAY / 300, seed=7)
    users = [i for i, r in enumerate(rows) if r.type == "user.created"]
    picks = [(users[n], users[-1 - n]) for n in range(len(ESCAPED))]
    for (old, new), (spelled, _) in zip(picks, ESCAPED, strict=True):
        for k in (old, new):
            data = orjson.loads(rows[k].raw)
            data["event"]["data"]["object"]["name"] = "@NAME@"
            rows[k] = rows[k]._replace(raw=orjson.dumps(data).decode().replace("@NAME@", spelled))
    return rows, picks


def test_values_a_json_encoder_escapes_are_found_in_either_tier(tmp_path):
    rows, picks = _rows()
    one, two = tiered_pair(tmp_path, rows, NOW)
    with EventReader(one) as single, EventReader(two) as reader:
        assert reader.archived_upto() > max(old for old, _ in picks) + 1
        assert reader.archived_upto() < min(new for _, new in picks) + 1
        for (old, new), (_, query) in zip(picks, ESCAPED, strict=True):
            f = EventFilter(query=query)
            found = {e.event_id for e in single.page_before(f, None, 1000)}
            assert {rows[old].event_id, rows[new].event_id} <= found, query
            assert answers(reader, f) == answers(single, f), query
        for (old, new), texts in zip(picks, TEXTS, strict=True):
            for text in texts:
                f = EventFilter(query=text)
                found = {e.event_id for e in single.page_before(f, None, 1000)}
                assert {rows[old].event_id, rows[new].event_id} <= found, text
                assert answers(reader, f) == answers(single, f), text


def test_the_archive_reads_the_raw_json_as_the_index_was_given_it():
    """The archive's phrase check (DuckDB) decodes the JSON exactly as the tokens were made of it (Python)."""
    raws = [
        r'{"a":"O\u0027Brien \u00e9 \u003C\u002b\u003d \u000a x","n":[1.50,1e5,-0.0],"s":"\ud83d\ude00"}',
        r'{"a":"\u0051zvx \\u0041 \u0041\u0042"}',  # escaped letters stay as spelled
        r'{"a":"ops\/x"}',
        r'{"a":"\ud800 lone"}',  # a lone surrogate: orjson refuses it, so the text stays as spelled
        r"not json \u0027",
        '{"a":"plain"}',
    ]
    decoded = duckdb.sql(
        f"SELECT {DECODED_RAW_SQL} FROM (SELECT unnest($raws) AS raw, generate_subscripts($raws, 1) AS k) ORDER BY k",
        params={"raws": raws},
    ).fetchall()
    assert [r[0] for r in decoded] == [indexed_raw(raw) for raw in raws]
    assert indexed_raw(raws[0]).startswith('{"a":"O\'Brien é <+= \\n x","n":[1.5,100000.0,-0.0]')
    assert "\\u0051zvx" in indexed_raw(raws[1]) and indexed_raw(raws[2]) == raws[2]


def _vocab(path: Path) -> set[tuple[str, int, str, int]]:
    """Every token the live full-text index holds: (token, seq, column, offset)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, events_fts, 'instance')")
        return set(conn.execute("SELECT term, doc, col, offset FROM temp.v"))
    finally:
        conn.close()


def _clean(path: Path) -> None:
    """The moved rows out of the live full-text index, as the writer's idle time does it."""

    def cleanup(conn: sqlite3.Connection) -> None:
        while archive_move.fts_cleanup_chunk(conn, path):
            pass

    writer = StoreWriter(path)
    try:
        writer.run_archive_job(cleanup).result()
    finally:
        writer.close()


def test_a_database_indexed_as_spelled_is_indexed_again_and_its_archived_rows_leave_the_index(
    tmp_path, monkeypatch
):
    """A database an earlier version wrote (schema 8) indexed the raw JSON as spelled, and some archived rows are
    still in its live index: the migration indexes the live rows again, and the idle-time cleanup deletes the
    archived ones with the text they were indexed with, leaving the index a new database would hold."""
    rows, picks = _rows()
    old, new = tmp_path / "old.sqlite3", tmp_path / "new.sqlite3"
    monkeypatch.setattr(archive_move, "fts_cleanup_chunk", lambda conn, database: False)  # archived rows stay
    for module in (indexer, archive_build, archive_move):  # as an earlier version indexed
        monkeypatch.setattr(module, "indexed_raw", lambda raw: raw)
    store_rows(old, rows, 10, NOW)
    monkeypatch.undo()
    conn = sqlite3.connect(old, isolation_level=None)
    try:
        conn.execute("DELETE FROM counters WHERE name = 'fts_spelled_upto'")
        conn.execute("PRAGMA user_version = 8")
        assert conn.execute("SELECT count(*) FROM archive_files WHERE fts_upto >= first_seq").fetchone()[0]
    finally:
        conn.close()
    assert any(term == "u0027qzvb" for term, *_ in _vocab(old))
    store_rows(new, rows, 10, NOW)
    StoreWriter(old).close()  # the migration
    with EventReader(old) as reader:
        found = {e.event_id for e in reader.page_before(EventFilter(query="user:o'qzvb"), None, 1000)}
        assert rows[picks[0][1]].event_id in found
    _clean(old)
    _clean(new)
    assert _vocab(old) == _vocab(new)
    assert not any(term.startswith("u00") for term, *_ in _vocab(old))


def test_events_moved_into_the_team_archive_leave_the_live_index_with_the_text_they_were_indexed_with(
    tmp_path,
):
    """A relay's move into the team's lake has no file to read the indexed text back from later: it deletes the
    moved rows from the live full-text index in its own transaction, with the decoded text they were given."""
    rows, picks = _rows()
    path = tmp_path / "relay.sqlite3"
    store_rows(path, rows, None, NOW)
    high = max(new for _, new in picks) + 1  # every escaped event moves (seqs count from 1)
    lake = Lake("postgres:dbname=lake", str(tmp_path / "lake"))
    writer = StoreWriter(path)
    try:
        planned = archive_move.Planned(0, high, (), lake=lake, team_upto=high, rows=high)
        assert writer.run_archive_job(lambda c: archive_move.commit(c, planned)).result()
    finally:
        writer.close()
    left = _vocab(path)
    assert left and min(seq for _t, seq, *_ in left) == high + 1  # nothing of the moved rows is left


def test_an_entity_once_called_a_name_the_json_spelled_with_escapes_is_found_by_it(tmp_path):
    """`timeline user:"Percy O'Qzvb"` looks for entities once called that (renamed since) in the raw JSON."""
    rows, picks = _rows()
    path = tmp_path / "t.sqlite3"
    store_rows(path, rows, None, NOW)
    conn = sqlite3.connect(path)
    try:
        for n, name in (
            (0, "Percy O'Qzvb"),
            (1, "ada+qzvm@example.com"),
            (3, "zed & QZVD"),
            (4, "René Qzvr"),
        ):
            old, new = picks[n]
            ids = {orjson.loads(rows[k].raw)["event"]["data"]["object"]["user_id"] for k in (old, new)}
            assert set(timeline_query.ids_once_called(conn, "user", name)) == ids, name
    finally:
        conn.close()


def test_free_text_finds_values_a_json_encoder_escapes_before_the_indexer_reaches_them(tmp_path):
    """Rows stored but not yet in the full-text index (a catch-up's, until the indexer has time) are searched by
    substring: a JSON with escapes is checked on the parts of the text an encoder writes as they are."""
    rows, picks = _rows()
    path = tmp_path / "t.sqlite3"
    store_rows(path, rows, None, NOW)
    conn = sqlite3.connect(path, isolation_level=None)
    try:  # every row out of the index again, as right after its commit
        indexed = conn.execute("SELECT seq, event_id, summary, raw FROM events").fetchall()
        conn.executemany(
            "INSERT INTO events_fts (events_fts, rowid, event_id, summary, raw) VALUES ('delete', ?, ?, ?, ?)",
            [(s, e, summary, indexed_raw(raw)) for s, e, summary, raw in indexed],
        )
        conn.execute("UPDATE counters SET value = 0 WHERE name = 'fts_upto'")
    finally:
        conn.close()
    # the name as it reads, or a part of it (a substring: "o qzvb" is left to the index, which splits words)
    texts = ((0, "o'qzvb"), (0, '"percy o\'qzvb"'), (1, "ada+qzvm"), (2, "tick`qzvt"), (3, '"zed & qzvd"'))
    texts += ((4, "rené"), (5, "tok=qzve"), (6, "<qzvq>"))
    with EventReader(path) as reader:
        for n, text in texts:
            old, new = picks[n]
            f = EventFilter(query=text)
            found = {e.event_id for e in reader.page_before(f, None, 1000)}
            assert {rows[old].event_id, rows[new].event_id} <= found, text
            assert reader.count(f) == len(found), text
