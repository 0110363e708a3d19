"""Schema 1 → 2 (dedupe key UNIQUE (time_ms, event_id)): a database written by the first release keeps every
event, its seq, its full-text index and the never-reused seq high-water mark, and dedupes as before."""

from __future__ import annotations

import re
import sqlite3

from helpers.events_factory import row
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter
from tenant_events.store.commit import insert_events
from tenant_events.store.database_open import open_database
from tenant_events.store.schema import _V1, SCHEMA_VERSION, _split


def _schema1_database(path, rows):
    """A file exactly as schema 1 wrote it: events, a deleted tail (retention), a cursor, an FTS index."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _split(_V1):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("BEGIN")
    for r in rows:  # schema 1's conflict target was the event id alone
        conn.execute(f"INSERT INTO events VALUES (NULL, {','.join('?' * len(r))})", r)
    conn.execute(
        "DELETE FROM events WHERE seq = ?", (len(rows),)
    )  # highest seq gone: must still not be reused
    conn.execute(
        "INSERT INTO events_fts (rowid, event_id, summary, raw) SELECT seq, event_id, summary, raw FROM events"
    )
    conn.execute("UPDATE counters SET value = ? WHERE name = 'fts_upto'", (len(rows),))
    conn.execute("UPDATE cursor SET stream_offset = 'off-schema1' WHERE id = 1")
    conn.execute("COMMIT")
    conn.close()


def test_a_schema1_database_is_migrated_without_losing_anything(tmp_path):
    path = tmp_path / "old.sqlite3"
    rows = [row(i)._replace(summary=f"summary {i}") for i in range(10)]
    _schema1_database(path, rows)
    writer = StoreWriter(path)
    try:
        assert writer.notice is None
        again = writer.commit_sync(Batch(events=[row(3), row(10)], cursor="off-10"))
        # seq 10 was deleted and is not reused; the duplicate row(3) uses up 11 (AUTOINCREMENT), row(10) gets 12
        assert (again.inserted, again.duplicates, again.first_seq, again.last_seq) == (
            1,
            1,
            10,
            12,
        )  # 10..12 holds it
    finally:
        writer.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # the newest, not just 2
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"events_time_id", "events_type_seq"} <= indexes and "events_time" not in indexes
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    with EventReader(path) as reader:
        stored = [(e.seq, e.event_id, raw) for e, raw in reader.export_iter()]
        assert stored == [(i + 1, rows[i].event_id, rows[i].raw) for i in range(9)] + [
            (12, row(10).event_id, row(10).raw)
        ]
        assert reader.cursor().offset == "off-10"
        found = reader.page(
            EventFilter(text=rows[4].event_id)
        )  # the FTS index still points at the right rows
        assert [e.seq for e in found] == [5]


def test_dedupe_key_is_the_event_time_and_id(tmp_path):
    """Same id and time → the same event, dropped; ids never repeat across times in a sane stream, but a row with
    the same id at another time is a different record and is kept (the key is documented in schema.py)."""
    writer = StoreWriter(tmp_path / "k.sqlite3")
    try:
        first = row(1)
        result = writer.commit_sync(
            Batch(events=[first, first, first._replace(offset="other-offset")], cursor="c")
        )
        assert (result.inserted, result.duplicates) == (1, 2)
    finally:
        writer.close()


def test_one_full_batch_is_one_insert_statement(tmp_path):
    """1,000 rows × 12 columns bind in one statement (SQLite's limit is 32,766 variables)."""
    conn, _ = open_database(tmp_path / "s.sqlite3")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    insert_events(conn, [row(i) for i in range(1000)])
    conn.close()
    assert len(statements) == 1


def test_a_migration_is_one_line_and_a_new_file_none(tmp_path, caplog):
    """The rules page tries a rule's fixtures on three new files each time: nothing at INFO for a file made anew
    (it logged every schema step, fifteen lines); an old file taken to the newest schema says so once."""
    import logging

    from tenant_events.alerts.builtin_rules import BUILTIN_RULES
    from tenant_events.alerts.fixtures import run_rule_tests

    schema = "tenant_events.store.schema"
    caplog.set_level(logging.INFO, logger=schema)
    rule = next(r for r in BUILTIN_RULES if r.tests)
    results = run_rule_tests(rule)
    assert results and all(r.passed for r in results)
    assert [r.getMessage() for r in caplog.records if r.name == schema and r.levelno >= logging.INFO] == []

    path = tmp_path / "old.sqlite3"
    _schema1_database(path, [row(i) for i in range(3)])
    StoreWriter(path).close()
    assert [r.getMessage() for r in caplog.records if r.name == schema and r.levelno >= logging.INFO] == [
        f"database old.sqlite3 migrated from schema 1 to {SCHEMA_VERSION}"
    ]


def _schema5_database(path):
    """A file as the release before the archive and the alerts' life left it (schema 5), with one alert."""
    from tenant_events.store.schema import _FOLLOW_UPS, MIGRATIONS

    conn = sqlite3.connect(path, isolation_level=None)
    for sql in MIGRATIONS[:5]:
        conn.execute("BEGIN")
        for statement in _split(sql):
            conn.execute(statement)
        if (follow_up := _FOLLOW_UPS.get(sql)) is not None:
            follow_up(conn)
        conn.execute("COMMIT")
    conn.execute("PRAGMA user_version = 5")
    conn.execute(
        "INSERT INTO alerts (rule_id, rule_name, severity, tenant, catch_up, notify, occurrences, event_count,"
        " first_seq, last_seq, first_event_id, last_event_id, first_time, last_time, last_time_ms, type_counts,"
        " detail, raised_at, updated_at) VALUES ('r', 'Rule', 'critical', 't', 0, 1, 2, 3, 1, 3, 'a', 'c',"
        " '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 1767225660000, '{}', '', 100.0, 160.0)"
    )
    return conn


def test_every_kind_of_schema_6_or_7_file_reaches_the_newest_schema(tmp_path):
    """Schema 6 is the archive's catalog and 7 the access history; builds that gave the alerts their life before
    those existed numbered that step 6 (no archive) or 7 (archive, no access history). Each kind of file ends
    with the archive's catalog, the access history's tables, the triage tables, the alerts' lifecycle columns
    (the older alert's latest firing as its last update) and the outbox with kinds, its queued firing kept."""
    from tenant_events.store.access_history import SCHEMA as ACCESS_SQL
    from tenant_events.store.alerts_schema import TRIAGE_SQL, add_lifecycle
    from tenant_events.store.archive_catalog import ARCHIVE_SQL

    def archive_first(conn: sqlite3.Connection) -> None:
        for statement in _split(ARCHIVE_SQL):
            conn.execute(statement)
        conn.execute(  # the outbox in its first shape, as the delivery worker made it beside the schema
            "CREATE TABLE alert_outbox (alert_id INTEGER NOT NULL, version INTEGER NOT NULL, queued_at REAL"
            " NOT NULL, routed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (alert_id, version)) WITHOUT ROWID"
        )
        conn.execute("INSERT INTO alert_outbox VALUES (1, 2, 170.0, 0)")

    def lifecycle_first(conn: sqlite3.Connection) -> None:
        from tenant_events.store.outbox_schema import enqueue, migrate_outbox

        for statement in _split(TRIAGE_SQL):
            conn.execute(statement)
        add_lifecycle(conn)
        migrate_outbox(conn)
        enqueue(conn, 1, 2, 170.0)

    def access_too(conn: sqlite3.Connection) -> None:
        archive_first(conn)
        for statement in _split(ACCESS_SQL):
            conn.execute(statement)

    def archive_then_lifecycle(conn: sqlite3.Connection) -> None:
        for statement in _split(ARCHIVE_SQL):
            conn.execute(statement)
        lifecycle_first(conn)

    access_tables = set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", ACCESS_SQL))
    kinds = (
        ("archive", archive_first, 6),
        ("lifecycle-at-6", lifecycle_first, 6),
        ("access", access_too, 7),
        ("lifecycle-at-7", archive_then_lifecycle, 7),
    )
    for name, step, version in kinds:
        path = tmp_path / f"{name}.sqlite3"
        conn = _schema5_database(path)
        conn.execute("BEGIN")
        step(conn)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
        conn.close()
        StoreWriter(path).close()
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9, name
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            assert {"archive_files", "archive_garbage", "alert_triage", "alert_triage_log"} <= tables, name
            assert access_tables and access_tables <= tables, name
            assert conn.execute("SELECT value FROM counters WHERE name = 'archived_upto'").fetchone() == (0,)
            fired = conn.execute("SELECT fired_at, raised_ms, group_key FROM alerts").fetchall()
            assert fired == [(160.0, 1767225660000, "")], name
            queued = conn.execute("SELECT alert_id, kind, version, nth FROM alert_outbox").fetchall()
            assert queued == [(1, "firing", 2, 0)], name
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
