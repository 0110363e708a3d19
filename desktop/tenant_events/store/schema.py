"""The SQLite schema of one tenant's database, its migrations, and the connection every user of the file opens.

Connections: WAL + synchronous=NORMAL (a crash loses at most the last transactions, never corrupts). Schema
migrations are keyed on `PRAGMA user_version`; a newer database is refused. The writer's checked open (a damaged
file moved aside) is database_open.py.

Tables:
  events      one row per event; `seq` (AUTOINCREMENT, never reused) is the stored order. Dedupe key (schema 2):
              UNIQUE (time_ms, event_id) — see _V2
  events_fts  FTS5 over event_id/summary/raw (external content); filled behind the writes, see writer.py
  cursor      one row: the resume offset and the newest stored event time, written with each batch
  gaps        "possible gap" markers (e.g. cursor expired, resumed by timestamp)
  rejected    frames that failed validation, raw, with offset and reason
  counters    cumulative numbers (duplicates dropped, FTS and directory progress, the alert rules' watermark)
  alerts, alert_events   alerts raised by the rules (schema 3, alerts_schema.py)
  entities, links  the entity directory kept from the events (schema 4, directory.py; connections named, 5)
  archive_files, archive_garbage  the archive tier's catalog: which Parquet files hold the events moved out
              of `events` (schema 6, archive_catalog.py)
  access_*    the access history: when each membership, role and connection held (schema 7, access_history.py)
  alert_triage, alert_outbox, alert_deliveries  an alert's life, its deliveries (schema 8, alerts_schema.py)
Schema 9 changed no table: the full-text index holds the raw JSON with its escapes decoded (fts_text.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from tenant_events.errors import StorageError
from tenant_events.store.access_history import SCHEMA as ACCESS_SQL
from tenant_events.store.alerts_schema import ALERTS_SQL, TRIAGE_SQL, add_lifecycle
from tenant_events.store.archive_catalog import ARCHIVE_SQL
from tenant_events.store.connections import TrackedConnection, refuse_if_gone, track, wait_while_reopened
from tenant_events.store.directory import install_and_rebuild
from tenant_events.store.fts_text import reindex_escaped
from tenant_events.store.outbox_schema import migrate_outbox

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 9
BUSY_TIMEOUT_MS: Final = 5000  # how long a connection waits for a lock (another writer, a checkpoint)

_V1: Final = """
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id    TEXT NOT NULL UNIQUE,
    stream_offset TEXT NOT NULL,
    type        TEXT NOT NULL,
    family      TEXT NOT NULL,
    time        TEXT NOT NULL,
    time_ms     INTEGER NOT NULL,
    source      TEXT NOT NULL,
    tenant      TEXT NOT NULL,
    purpose     TEXT,
    summary     TEXT,  -- NULL until the indexer fills it (writer.py)
    raw         TEXT NOT NULL,
    received_at REAL NOT NULL
);
CREATE INDEX events_type_seq ON events(type, seq);
CREATE INDEX events_time ON events(time_ms);
CREATE VIRTUAL TABLE events_fts USING fts5(
    event_id, summary, raw, content='events', content_rowid='seq', tokenize='unicode61 remove_diacritics 2'
);
CREATE TABLE cursor (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    stream_offset   TEXT,
    last_event_time TEXT,
    updated_at      REAL
);
INSERT INTO cursor (id) VALUES (1);
CREATE TABLE gaps (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at   REAL NOT NULL,
    reason       TEXT NOT NULL,
    resumed_from TEXT,
    lost_cursor  TEXT,
    after_seq    INTEGER
);
CREATE TABLE rejected (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    received_at REAL NOT NULL,
    event_name  TEXT NOT NULL,
    stream_offset TEXT,
    reason      TEXT NOT NULL,
    raw         TEXT NOT NULL
);
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('duplicates', 0), ('fts_upto', 0);
"""

# Schema 2: the dedupe key becomes UNIQUE (time_ms, event_id) instead of UNIQUE (event_id). A re-delivered
# event (at-least-once delivery, docs/event-stream.md "Cursors and resume"; the overlap after a cursor_expired resume) is the same
# event, with the same id AND the same time, so the key drops exactly the same duplicates. But event ids are
# random, so an index on them alone takes every insert to a random leaf page: each batch dirtied hundreds of
# index pages (each written whole to the WAL) and, past the page cache, read them back from disk — ingest slowed
# as the database grew. Event time grows with the stream, so the new key's inserts land at the index's right
# edge. It also serves the time filters, replacing events_time. SQLite cannot drop a column's UNIQUE
# constraint, so the table is rebuilt (same seq values, so the FTS index and gap markers stay valid; the
# AUTOINCREMENT high-water mark is carried over so a seq is never reused).
_V2: Final = """
CREATE TABLE events_v2 (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id    TEXT NOT NULL,
    stream_offset TEXT NOT NULL,
    type        TEXT NOT NULL,
    family      TEXT NOT NULL,
    time        TEXT NOT NULL,
    time_ms     INTEGER NOT NULL,
    source      TEXT NOT NULL,
    tenant      TEXT NOT NULL,
    purpose     TEXT,
    summary     TEXT,  -- NULL until the indexer fills it (writer.py)
    raw         TEXT NOT NULL,
    received_at REAL NOT NULL
);
INSERT INTO events_v2 SELECT seq, event_id, stream_offset, type, family, time, time_ms, source, tenant, purpose,
    summary, raw, received_at FROM events ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'events_v2';
INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v2', seq FROM sqlite_sequence WHERE name = 'events';
DROP TABLE events;
ALTER TABLE events_v2 RENAME TO events;
CREATE INDEX events_type_seq ON events(type, seq);
CREATE UNIQUE INDEX events_time_id ON events(time_ms, event_id);
"""

# Schema 3: the alerts the rules raise and the rules' evaluation watermark (alerts_schema.py).
_V3: Final = ALERTS_SQL
# Schema 4: the entity directory, kept by store/directory.py in each batch's transaction. Both tables are keyed by
# the entities' own ids (WITHOUT ROWID: one b-tree walk finds and updates a row, the upkeep's main cost). The
# follow-up (_FOLLOW_UPS) creates the directory's helper tables and trigger and fills both tables from the events
# already stored; `tenant-events reindex` does that again on demand.
_V4: Final = """
CREATE TABLE entities (
    kind       TEXT NOT NULL,  -- user | organization | group | role | connection
    id         TEXT NOT NULL,
    name       TEXT, name_at    INTEGER,  -- each *_at is the stamp of the event that set the value (directory.py)
    display    TEXT, display_at INTEGER,  -- an organization's display_name
    email      TEXT, email_at   INTEGER,
    detail     TEXT, detail_at  INTEGER,  -- a group's type
    parent     TEXT, parent_at  INTEGER,  -- a group's organization or connection (by its type)
    created_at INTEGER,  -- stamp of the newest *.created
    deleted_at INTEGER,  -- stamp of the newest *.deleted; deleted while newer than created_at
    PRIMARY KEY (kind, id)
) WITHOUT ROWID;
CREATE TABLE links (
    rel        INTEGER NOT NULL,  -- directory.Rel: which relation, and so the kinds of a, b and c
    a          TEXT NOT NULL,
    b          TEXT NOT NULL,
    c          TEXT NOT NULL,  -- '' for two-ended relations
    added_at   INTEGER,  -- stamp of the newest add / assign
    removed_at INTEGER,  -- stamp of the newest removal
    PRIMARY KEY (rel, a, b, c)
) WITHOUT ROWID;
CREATE INDEX links_b ON links(b);
CREATE INDEX links_c ON links(c) WHERE c <> '';
"""

# Schema 5: the directory also learns connections' names and strategies from `data.context.connection`: its
# scratch table gains columns (it is empty between statements), and the follow-up builds the directory again so
# the events already stored name their connections too.
_V5: Final = """
DROP TABLE IF EXISTS directory_scratch;
"""

# Schema 6: the archive tier's catalog (archive_catalog.py); events with seq <= counters.archived_upto live in
# Parquet files beside the database instead of `events`.
_V6: Final = ARCHIVE_SQL

# Schema 7: the access history (access_history.py), the spans of time each link of the directory held. Only the
# tables: the idle-time indexer fills them from the events already stored, a chunk a transaction, so opening a
# large database does not wait for it. The archive's catalog again (every statement of both is IF NOT EXISTS / OR
# IGNORE): an earlier build of the access history called its own tables schema 6, and a file it made is at 6
# without the catalog.
_V7: Final = ARCHIVE_SQL + ACCESS_SQL

# Schema 8: each alert's life (firing, acknowledged, resolved; its versions and their evidence): the triage tables,
# then (follow-up) alerts_schema.py's columns and the outbox in its shape with kinds (outbox_schema.py). Earlier
# builds of the alerts' life numbered it 6 (before the archive) or 7 (before the access history): every step here,
# with the archive's catalog and the access history's tables made again, only adds what is missing, so each kind
# of schema-6 or schema-7 file ends the same.
_V8: Final = ARCHIVE_SQL + ACCESS_SQL + TRIAGE_SQL

# Schema 9: the full-text index holds the raw JSON with its `\u` escapes decoded (fts_text.py). The follow-up
# indexes the live rows whose JSON holds one again; the archived rows still in the index (up to the highest
# archived seq now, `fts_spelled_upto`) were indexed as spelled, and the idle-time cleanup deletes them so.
_V9: Final = """
INSERT OR IGNORE INTO counters (name, value) SELECT 'fts_spelled_upto', value FROM counters
    WHERE name = 'archived_upto';
"""

# Ordered migrations: MIGRATIONS[n] takes a database from user_version n to n + 1.
MIGRATIONS: Final[tuple[str, ...]] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9)
assert len(MIGRATIONS) == SCHEMA_VERSION
# Work a migration needs after its SQL, in the same transaction; keyed by the SQL so reordering cannot part them.
_FOLLOW_UPS: Final[dict[str, Callable[[sqlite3.Connection], object]]] = {
    _V4: install_and_rebuild,
    _V5: install_and_rebuild,
    _V8: lambda conn: [add_lifecycle(conn), migrate_outbox(conn)],  # type: ignore[func-returns-value]
    _V9: reindex_escaped,
}


def make_private(path: Path) -> None:
    """Create the file 0600 before SQLite does: its unix VFS gives -wal and -shm the database file's mode, so a
    file born with the umask (0644) would leave events readable by other users in all three. Files from an
    older version are tightened. Failures (read-only dir) are left for sqlite3.connect to report. An existing
    file is never opened here: closing any descriptor of a file drops every POSIX lock the process holds on it,
    so a second connection in a process whose writer is busy broke the writer's locks ("disk I/O error")."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        with contextlib.suppress(OSError):
            os.chmod(path.with_name(name), 0o600)


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection with the pragmas every user of the file needs. Autocommit; callers BEGIN explicitly."""
    wait_while_reopened(path)  # a connection beside the old ones would take up their removed wal-index
    refuse_if_gone(path)
    if readonly:
        conn = sqlite3.connect(
            f"{path.as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            factory=TrackedConnection,
        )
    else:
        make_private(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, factory=TrackedConnection)
    track(conn, path)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if not readonly:
        _to_wal(conn)
    conn.execute(
        "PRAGMA synchronous = NORMAL"
    )  # WAL + NORMAL: durable across app crashes (sqlite.org/wal.html)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -32000")
    return conn


def small_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection with a 4 MB page cache (the window's timelines and time pages)."""
    conn = connect(path, readonly=True)
    conn.execute("PRAGMA cache_size = -4000")
    return conn


def _to_wal(conn: sqlite3.Connection) -> None:
    """Switch a new file to WAL. Two processes creating the same file at once (the app and a CLI command, two
    `stream`s) meet in the rollback journal's locks, where SQLite answers "locked" at once rather than wait (it
    would deadlock): that answer is retried for as long as any other lock is waited for."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to SCHEMA_VERSION, one version a transaction; refuse a database written by a newer app.
    The version is read inside each write transaction: another process opening the same file may have taken the
    schema further meanwhile, and a step must never run twice."""
    version = start = int(conn.execute("PRAGMA user_version").fetchone()[0])
    while version < SCHEMA_VERSION:  # (an up-to-date file is opened without taking the write lock)
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version >= SCHEMA_VERSION:
                conn.execute("COMMIT")
                break
            for statement in _split(MIGRATIONS[version]):
                conn.execute(statement)
            if (follow_up := _FOLLOW_UPS.get(MIGRATIONS[version])) is not None:
                follow_up(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        version += 1
    _log_migration(path, start, version)
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{path} was written by a newer Tenant Events (schema {version}, this app knows {SCHEMA_VERSION})",
            "update Tenant Events, or use another --data-dir",
        )


def _log_migration(path: Path, start: int, end: int) -> None:
    """One line for what `migrate` did: a new file made is routine (a rule's fixtures make three each time the
    rules page tries them), an existing one taken to a newer schema is news."""
    if end <= start or end > SCHEMA_VERSION:
        return
    if start == 0:
        log.debug("database %s created (schema %d)", path.name, end)
    else:
        log.info("database %s migrated from schema %d to %d", path.name, start, end)


def rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if any. After SQLITE_FULL or an I/O error SQLite has already rolled back, and a
    second ROLLBACK would raise "no transaction is active" and hide the real error ("disk is full") from the user.
    """
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _split(script: str) -> list[str]:
    """Statements of a migration script (executescript would commit on its own, outside our transaction)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return [s for s in out if s]
