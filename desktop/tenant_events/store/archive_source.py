"""The archive's connection for one reader (archive_reader.py): its DuckDB cursor, and the relations `ev`
(events) and `tok` (token lists) over the files of a snapshot — Parquet files in the tenant's archive folder and
the team archive's rows the database is read with (team_view.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tenant_events.store import duck
from tenant_events.store.archive_catalog import ArchiveFile, ArchiveSnapshot, TeamRows
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.team_view import TEAM_PREFIX

if TYPE_CHECKING:
    import duckdb


class ArchiveMoved(Exception):
    """A file of the snapshot is gone (merged or expired since): read again with a new snapshot."""


@contextmanager
def _files_moved() -> Iterator[None]:
    """DuckDB's failure for a file of the snapshot that is gone raised as ArchiveMoved; others as they are."""
    import duckdb

    try:
        yield
    except duckdb.IOException as exc:
        if "No files found" in str(exc) or "No such file" in str(exc):
            raise ArchiveMoved(str(exc)) from exc
        raise


def _list(paths: Sequence[str]) -> str:
    return "[" + ", ".join(duck.literal(p) for p in paths) + "]"


class ArchiveSource:
    """One reader's cursor (opened on first use) and what its snapshots' files are."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        if folder.is_dir():
            # DuckDB now, where the reader is made (the app: before its window shows): its import holds every
            # Python thread for ~0.2 s, which froze a window whose first count imported it on a worker
            duck.engine()
        self._cursor: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()
        self._teams_lock = threading.Lock()
        self._teams: dict[str, TeamRows] = {}  # the team archive's rows of the snapshots used (team_view.py)
        # whether a file's token file holds its field rows (archive_fields.py), and whether any of them is a
        # value its events' JSON may spell otherwise (`#!`)
        self._worded: dict[str, bool] = {}
        self._spelled: dict[str, bool] = {}
        # the files and keys whose field rows the table `held` of the cursor holds (archive_candidates.py)
        self._held: tuple[tuple[str, ...], frozenset[tuple[str, bool]]] | None = None

    def close(self) -> None:
        with self._lock:
            if self._cursor is not None:
                self._cursor.close()
                self._cursor = None

    def _relations(self, files: Sequence[ArchiveFile], tokens: bool) -> str:
        """`ev` (and `tok`) over `files`: Parquet files in the folder and the team archive's rows."""
        local = [f for f in files if not f.name.startswith(TEAM_PREFIX)]
        with self._teams_lock:
            shared = [self._teams[f.name] for f in files if f.name.startswith(TEAM_PREFIX)]
        ev_parts, tok_parts = [], []
        if local:
            ev_parts.append(
                f"SELECT * FROM read_parquet({_list([str(self.folder / f.name) for f in local])})"  # noqa: S608
            )
            tok_parts.append(
                f"SELECT * FROM read_parquet({_list([str(self.folder / tokens_name(f.name)) for f in local])})"  # noqa: S608
            )
        for team in shared:
            ev_parts.append(team.events_sql())
            tok_parts.append(team.tokens_sql())
        sql = f"WITH ev AS ({' UNION ALL '.join(ev_parts)})"
        if tokens:
            # NOT MATERIALIZED: a lookup of several tokens reads `tok` once per token, each read pruned to the
            # row groups that can hold it; DuckDB otherwise read the files once for all, filtered by an OR of
            # every token, which its row groups' statistics cannot prune (~10x the time)
            sql += f", tok AS NOT MATERIALIZED ({' UNION ALL '.join(tok_parts)})"
        return sql

    def use(self, snap: ArchiveSnapshot) -> ArchiveSnapshot:
        """Take note of the snapshot's team archive rows (the reader's calls pass the snapshot on)."""
        if snap.team is not None:
            with self._teams_lock:
                if len(self._teams) > 64:
                    self._teams.clear()
                self._teams[snap.team.file.name] = snap.team
        return snap

    def _open(self) -> duckdb.DuckDBPyConnection:
        """The cursor (hold the lock)."""
        if self._cursor is None:
            self._cursor = duck.cursor()
        return self._cursor

    def _run(self, sql: str) -> list[Any]:
        with self._lock:
            return self._execute(self._open(), sql)

    @staticmethod
    def _execute(cursor: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with _files_moved():
            return cursor.execute(sql, list(params)).fetchall()

    @staticmethod
    def _one_by_one(cursor: duckdb.DuckDBPyConnection, sql: str) -> Iterator[Any]:
        """The rows of `sql`, each made into Python alone: DuckDB holds the GIL while it makes a fetch's rows,
        and a read thread (below the window's priority) that holds it long keeps the window's thread waiting."""
        with _files_moved():
            cursor.execute(sql)
            while (row := cursor.fetchone()) is not None:
                yield row

    def chunks(
        self, files: Sequence[ArchiveFile], select: str, where: str, rest: str, size: int
    ) -> Iterator[list[Any]]:
        """`SELECT {select} FROM ev WHERE {where} {rest}` over `files`, `size` rows at a time: more rows than are
        held at once (a rule's history, event_history.py)."""
        with self._lock, _files_moved():
            cursor = self._open()
            cursor.execute(self._select(files, select, where, rest))
            while rows := cursor.fetchmany(size):
                yield rows

    def _select(self, files: Sequence[ArchiveFile], select: str, where: str, rest: str) -> str:
        return f"{self._relations(files, False)} SELECT {select} FROM ev WHERE {where} {rest}"  # noqa: S608
