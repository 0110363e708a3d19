"""Naming a page's entities over the archive tier reads only the archive files that hold their versions: a year's
archive is a dozen monthly files, and a page of the newest rows names entities whose versions lie in a file or two,
where every file's events were read (~1.6 s of DuckDB's CPU a page, competing with the window). The answer is the
one entity-by-entity reads give."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from helpers.entity_events import T0, Tenant
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_source import ArchiveSource
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.values.retention import Retention

MONTH = 31 * 86400
LATER = T0.timestamp() + 400 * 86400  # every event is old enough to move


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the archive readers run (counted, then run as ever)."""
    said: list[str] = []
    run = ArchiveSource._execute

    def counted(cursor: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[Any]:
        said.append(sql)
        return run(cursor, sql, params)

    monkeypatch.setattr(ArchiveSource, "_execute", staticmethod(counted))
    return said


def _events_files(sql: str) -> int:
    """How many archive files of events (not of token lists) a statement reads."""
    return sum(
        1 for part in sql.split("'") if part.endswith(".parquet") and not part.endswith(".tokens.parquet")
    )


def test_naming_entities_reads_the_events_of_the_files_holding_their_versions_only(
    tmp_path: Path, statements: list[str]
) -> None:
    t = Tenant()
    rows = []
    for month in range(4):
        for i in range(20):
            at = month * MONTH + i * 60
            rows.append(t.row("organization.created", t.org(f"org_m{month}x{i}", f"old-{month}-{i}"), at=at))
            rows.append(
                t.row("organization.updated", t.org(f"org_m{month}x{i}", f"new-{month}-{i}"), at=at + 1)
            )
    path = tmp_path / "t.sqlite3"
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=rows, cursor="1"))
        writer.index_all_sync()
        assert keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER).moved == len(rows)
    finally:
        writer.close()
    keys = [("organization", f"org_m3x{i}") for i in range(5)]
    directory = DirectoryReader(path)
    try:
        statements.clear()
        many = directory.objects_of_many(keys)
        read = list(statements)
        singly = {key: directory.objects_of(*key) for key in keys}
    finally:
        directory.close()
    assert many == singly
    assert all(len(pairs) == 2 for pairs in many.values())
    files = [_events_files(sql) for sql in read]
    assert max(files) == 1, read  # the newest month's file: the three older ones hold none of their versions
    assert len(read) <= 2, read
