"""A team's shared archive: DuckLake, its catalog in PostgreSQL, its Parquet files in a shared folder or in
S3-compatible object storage (lake_storage.py) (docs/archive.md "Team archive").

Only the relay holding the hub's lease writes it (`write_move`, called by the mover of its own copy of the hub's
events, archive_move.py); every viewer reads it beside its own tiers (team_view.py) and attaches it read-only.

Numbering. The lake gives each event a place of its own (`head` + 1, + 2, …) and stores it as
`LAKE_SEQ_BASE + place`: below every seq a tenant database gives (those start at 1), so in a viewer's reads the
team's older events come before its own, and the relay that takes the lease over (whose database numbers the
hub's events its own way) goes on numbering where the lake stands.

Tables (each move one lake transaction):
  events  the archive file's columns (archive_layout.py), seq as above
  tokens  each move's token lists (term, n, seqs) and the move's last seq (`upto`)
  head    the last place given; every move reads and raises it, so two relays that move at once conflict in
          DuckLake and the second one fails whole
The lake's retention (`expire`) drops its oldest whole moves once every event of theirs is older than the
setting; places are never given again, so the lake's first row is then above LAKE_SEQ_BASE + 1.
A move leaves out every event the lake already holds (the same time and id, the store's unique key): a relay
killed after the lake's commit and before its own database let go of the rows, or one that takes over and moves
its own copy of what its predecessor moved, adds nothing twice.

The catalog is libpq's connection string behind `postgres:` (`postgres:dbname=events host=db user=relay`), never
with a password: the password is handed to this process (`use_password`, from the keyring) and goes only into
the in-memory ATTACH; every error is stripped of it before it is shown.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.errors import ConfigError, NetworkError, StorageError, UserFixableError
from tenant_events.server_text import shown
from tenant_events.spill_folder import own_folder
from tenant_events.store import duck, lake_storage
from tenant_events.store.archive_build import (
    EVENT_COLUMNS,
    LiveRow,
    column_types,
    events_select,
    scratch,
    tokens_select,
)
from tenant_events.values.team_archive import Lake

if TYPE_CHECKING:
    import duckdb

LAKE_SEQ_BASE: Final = -(2**53)
_lock = threading.Lock()
_attaching = threading.Lock()
_attached: dict[tuple[str, str, bool], str] = {}
_passwords: dict[str, str] = {}
PasswordSource = Callable[[str], str | None]
_source: list[
    PasswordSource
] = []  # where a password not given is looked up (the keyring: tenant/team_archive.py)


def use_password(catalog: str, password: str | None) -> None:
    """The password of the catalog's PostgreSQL user, for this process only (memory; never written)."""
    with _lock:
        if password:
            _passwords[catalog] = password
        else:
            _passwords.pop(catalog, None)


def password_source(source: PasswordSource) -> None:
    """Where to look a catalog's password up when none was given (called once, when the lake is first attached)."""
    with _lock:
        _source[:] = [source]


def _password(catalog: str) -> str:
    with _lock:
        if catalog in _passwords:
            return _passwords[catalog]
        source = _source[0] if _source else None
    found = source(catalog) if source is not None else None
    with _lock:
        _passwords.setdefault(catalog, found or "")
        return _passwords[catalog]


class NoLakeYet(Exception):
    """A reader attached the catalog before the relay's first move made the lake: it holds nothing yet."""


class LakeBusy(Exception):
    """Another relay's move committed first, or this relay's lease lapsed: nothing was written."""


def _scrub(text: str, lake: Lake) -> str:
    with _lock:
        secret = _passwords.get(lake.catalog)
    return lake_storage.scrub(text.replace(secret, "…") if secret else text)


def _said(exc: BaseException, lake: Lake) -> str:
    """What went wrong, in a few words: PostgreSQL's own error when DuckDB quotes it after the statements it
    ran (which hold event data), else DuckDB's first line; never the password; at most 300 characters."""
    text = _scrub(str(exc), lake).strip()
    if "ERROR:" in text:
        text = text[text.rindex("ERROR:") :]
    lines = text.splitlines()
    return shown(lines[0] if lines else type(exc).__name__)[:300]


def explain(lake: Lake, exc: BaseException) -> UserFixableError:
    """DuckDB's error about the lake as one line a user can act on (the password and the storage's keys never
    in it)."""
    said = _said(exc, lake)
    if lake.in_object_storage:
        refused = lake_storage.explain(lake, _scrub(str(exc), lake))
        if refused is not None:
            return refused
    where = f"the team archive ({lake.catalog.split(' password', 1)[0]})"
    if "password authentication failed" in said or "no password supplied" in said:
        return ConfigError(
            "team archive", f"{where} refused the password ({said[:300]})", "store its password"
        )
    if "permission denied for" in said.lower():  # PostgreSQL's: a viewer's user may only read
        return ConfigError(
            "team archive",
            f"{where}: its catalog user may not do this ({said[:300]})",
            "only the relay writes it",
        )
    if "No such file" in said or "Permission denied" in said or isinstance(exc, OSError):
        return StorageError(f"{where}: cannot use its files ({said[:300]})", "check the shared folder")
    return NetworkError(
        f"{where} cannot be read ({said[:300]})", "check the catalog's server and the network"
    )


def attach(lake: Lake, read_only: bool) -> str:
    """The lake attached to the process's engine (once; a read-only reader never writes the catalog), its
    tables made when writing; returns its alias. UserFixableError when it cannot be."""
    key = (lake.catalog, lake.data_path, read_only)
    with _attaching:  # one ATTACH at a time: two readers' first reads at once would both attach the alias
        with _lock:
            alias = _attached.get(key)
        if alias is not None:
            _keys_as_given(lake)
            return alias
        alias = _attach(lake, read_only, "lake_" + hashlib.sha256(repr(key).encode()).hexdigest()[:12])
        with _lock:
            _attached[key] = alias
        return alias


def _keys_as_given(lake: Lake) -> None:
    """An attached lake in object storage: its secret made again if its keys changed since (cheap otherwise)."""
    import duckdb

    if lake.in_object_storage:
        try:
            lake_storage.configure(lake)
        except duckdb.Error as exc:
            raise explain(lake, exc) from None


def _attach(lake: Lake, read_only: bool, alias: str) -> str:
    import duckdb

    password = _password(lake.catalog)
    duck.load_extension("postgres_scanner")
    duck.load_extension("ducklake")
    check_storage(lake)
    conninfo = lake.catalog + (" password=" + _libpq_quoted(password) if password else "")
    options = f"DATA_PATH {duck.literal(lake.data_path)}" + (", READ_ONLY" if read_only else "")
    conn = duck.cursor()
    try:
        conn.execute(f"ATTACH {duck.literal('ducklake:' + conninfo)} AS {alias} ({options})")
        if not read_only:
            columns = ", ".join(f"{n} {t}" for n, t in zip(EVENT_COLUMNS, column_types(), strict=True))
            conn.execute(f"CREATE TABLE IF NOT EXISTS {alias}.events ({columns})")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {alias}.tokens (term VARCHAR, n BIGINT, seqs BIGINT[], upto BIGINT)"
            )
            conn.execute(f"CREATE TABLE IF NOT EXISTS {alias}.head (seq BIGINT)")
            conn.execute(f"INSERT INTO {alias}.head SELECT 0 WHERE (SELECT count(*) FROM {alias}.head) = 0")  # noqa: S608
    except duckdb.Error as exc:
        with contextlib.suppress(duckdb.Error):
            conn.execute(f"DETACH DATABASE IF EXISTS {alias}")
        if read_only and "creating a new DuckLake is explicitly disabled" in str(exc):
            raise NoLakeYet(_said(exc, lake)) from None
        raise explain(lake, exc) from None
    finally:
        conn.close()
    return alias


def check_storage(lake: Lake) -> None:
    """For files in object storage: the storage reached with the lake's keys and its place listed once (a wrong
    key, a missing bucket or an endpoint out of reach said now, as one line). UserFixableError otherwise."""
    import duckdb

    if not lake.in_object_storage:
        return
    try:
        lake_storage.configure(lake)
        lake_storage.probe(lake)
    except duckdb.Error as exc:
        raise explain(lake, exc) from None


def _libpq_quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def head(cur: duckdb.DuckDBPyConnection, alias: str) -> int:
    """The last place given (0: none yet, or no tables yet: a viewer may attach before the relay made them)."""
    import duckdb

    try:
        row = cur.execute(f"SELECT max(seq) FROM {alias}.head").fetchone()  # noqa: S608
    except duckdb.CatalogException:
        return 0
    return int(row[0]) if row and row[0] is not None else 0


def write_move(lake: Lake, rows: Sequence[LiveRow], fence: Callable[[], bool] = lambda: True) -> int:
    """`rows` (a relay database's, in its stored order) into the lake in ONE transaction, leaving out those it
    holds already; `fence` (the relay's lease) is asked just before the commit. Returns the lake seq of the last
    of `rows`. LakeBusy: nothing was written."""
    with tempfile.TemporaryDirectory(dir=own_folder(), prefix="lake-move-") as work_dir:
        return _changed(lake, lambda cur, alias: _move(cur, alias, rows, Path(work_dir)), fence, "move")


def expire(lake: Lake, cutoff_ms: int, fence: Callable[[], bool] = lambda: True) -> int:
    """The lake's retention, by the relay holding the lease: the oldest moves whose every event is older than
    `cutoff_ms` leave the lake, their events and token lists, in ONE transaction (whole moves, as the local
    archive drops whole files: an event stays until the newest of its move is due). Returns the events dropped.
    Their files go with DuckLake's own upkeep (`tidy`), after its grace."""
    return _changed(lake, lambda cur, alias: _expire(cur, alias, cutoff_ms), fence, "retention pass")


def _expire(cur: duckdb.DuckDBPyConnection, alias: str, cutoff_ms: int) -> int:
    # every event up to `last` is older than the cutoff; the moves ending at or below it go
    last = cur.execute(
        f"SELECT max(seq) FROM (SELECT seq, max(time_ms) OVER (ORDER BY seq) AS newest FROM {alias}.events)"  # noqa: S608
        " WHERE newest < ?",
        [cutoff_ms],
    ).fetchone()
    if last is None or last[0] is None:
        return 0
    bound = cur.execute(f"SELECT max(upto) FROM {alias}.tokens WHERE upto <= ?", [int(last[0])]).fetchone()  # noqa: S608
    if bound is None or bound[0] is None:
        return 0
    gone = cur.execute(f"SELECT count(*) FROM {alias}.events WHERE seq <= ?", [int(bound[0])]).fetchone()  # noqa: S608
    cur.execute(f"DELETE FROM {alias}.events WHERE seq <= ?", [int(bound[0])])  # noqa: S608
    cur.execute(f"DELETE FROM {alias}.tokens WHERE upto <= ?", [int(bound[0])])  # noqa: S608
    return int(gone[0]) if gone else 0


def _changed(
    lake: Lake, work: Callable[[duckdb.DuckDBPyConnection, str], int], fence: Callable[[], bool], what: str
) -> int:
    """`work(cursor, alias)` in ONE lake transaction, `fence` asked just before the commit; LakeBusy: nothing
    was written (another relay's change committed first, or the lease lapsed)."""
    import duckdb

    alias = attach(lake, read_only=False)
    cur = duck.cursor()
    try:
        cur.execute("BEGIN")
        try:
            done = work(cur, alias)
            if not fence():
                raise LakeBusy(f"the relay's lease lapsed before the {what} committed")
            cur.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # (a failed COMMIT has rolled back already)
                cur.execute("ROLLBACK")
            raise
    except duckdb.TransactionException as exc:
        if "conflict" not in str(exc).lower():  # (a commit PostgreSQL refused, for one)
            raise explain(lake, exc) from None
        raise LakeBusy(_said(exc, lake)) from None
    except duckdb.Error as exc:
        raise explain(lake, exc) from None
    finally:
        cur.close()
    return done


Identity = tuple[int, str]  # (time_ms, event_id): the store's unique key


def _held(cur: duckdb.DuckDBPyConnection, alias: str, rows: Sequence[LiveRow]) -> dict[Identity, int]:
    """The lake seq of each of `rows` the lake holds."""
    if not rows:
        return {}
    low, high = min(r[5] for r in rows), max(r[5] for r in rows)
    found = cur.execute(
        f"SELECT time_ms, event_id, min(seq) FROM {alias}.events WHERE time_ms BETWEEN ? AND ?"  # noqa: S608
        " AND event_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY ALL",
        [low, high, sorted({r[1] for r in rows})],
    ).fetchall()
    return {(int(t), str(i)): int(s) for t, i, s in found}


def held_prefix(lake: Lake, rows: Sequence[LiveRow]) -> list[int]:
    """The lake seq of each of `rows` (in stored order) the lake holds, from the first on up to the first it
    lacks (none when it holds not the first): what a viewer may let go of (read-only)."""
    import duckdb

    try:
        alias = attach(lake, read_only=True)
    except NoLakeYet:
        return []
    cur = duck.cursor()
    try:
        if not head(cur, alias):
            return []
        held = _held(cur, alias, rows)
    except duckdb.Error as exc:
        raise explain(lake, exc) from None
    finally:
        cur.close()
    places: list[int] = []
    for row in rows:
        seq = held.get((row[5], row[1]))
        if seq is None:
            break
        places.append(seq)
    return places


def _move(cur: duckdb.DuckDBPyConnection, alias: str, rows: Sequence[LiveRow], work: Path) -> int:
    held = _held(cur, alias, rows)
    at = head(cur, alias)
    fresh: list[LiveRow] = []
    last = 0
    for row in rows:
        identity = (row[5], row[1])
        last = held.get(identity, 0)
        if not last:
            last = LAKE_SEQ_BASE + at + len(fresh) + 1
            held[identity] = last
            fresh.append((last, *row[1:]))
    if not fresh:
        return last
    made = scratch([fresh], work)
    # in seq order, as events_select reads them (a cursor of this move's own)
    cur.execute("SET SESSION preserve_insertion_order = true")
    cur.execute(f"INSERT INTO {alias}.events {events_select(work)}")
    tokens = tokens_select(work, made.longest)
    cur.execute(f"INSERT INTO {alias}.tokens SELECT *, {int(fresh[-1][0])} FROM ({tokens})")  # noqa: S608
    cur.execute(f"UPDATE {alias}.head SET seq = ?", [at + len(fresh)])  # noqa: S608
    return last


TIDY_GRACE: Final = (
    "1 hour"  # a file DuckLake no longer lists is deleted this long after (a reader may scan it)
)


def tidy(lake: Lake) -> None:
    """DuckLake's own upkeep, by the relay that writes: each move's small files merged, snapshots and the files
    only they listed dropped after TIDY_GRACE (no read lasts that long). Rows never change: reads stay whole."""
    import duckdb

    alias = attach(lake, read_only=False)
    cur = duck.cursor()
    try:
        cur.execute(f"CALL ducklake_merge_adjacent_files({duck.literal(alias)})")
        older = f"now() - INTERVAL '{TIDY_GRACE}'"
        cur.execute(f"CALL ducklake_expire_snapshots({duck.literal(alias)}, older_than => {older})")
        cur.execute(f"CALL ducklake_cleanup_old_files({duck.literal(alias)}, older_than => {older})")
        # a killed move's files, never listed (a younger one may be a move going on)
        cur.execute(f"CALL ducklake_delete_orphaned_files({duck.literal(alias)}, older_than => {older})")
    except duckdb.TransactionException as exc:
        raise LakeBusy(_said(exc, lake)) from None
    except duckdb.Error as exc:
        raise explain(lake, exc) from None
    finally:
        cur.close()
