"""Fixtures for the archive tier's tests: what its readers ask DuckDB."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pytest

from tenant_events.store.archive_source import ArchiveSource


@pytest.fixture
def archive_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the archive readers run (counted, then run as ever)."""
    said: list[str] = []
    run = ArchiveSource._execute

    def counted(cursor: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[Any]:
        said.append(sql)
        return run(cursor, sql, params)

    monkeypatch.setattr(ArchiveSource, "_execute", staticmethod(counted))
    return said
