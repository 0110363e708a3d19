"""Ctrl-C while DuckDB runs a query (an archive read) stops the command quietly with 130, as anywhere else.

DuckDB's Python client, when Ctrl-C reaches it mid-query, stops the query and raises its own RuntimeError("Query
interrupted") caused by the KeyboardInterrupt: the command's code never sees the KeyboardInterrupt itself."""

from __future__ import annotations

import duckdb

from tenant_events.cli.main import interrupted


def _as_duckdb_raises_it() -> RuntimeError:
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ctrl_c:
            raise RuntimeError("Query interrupted") from ctrl_c
    except RuntimeError as exc:
        return exc


def test_ctrl_c_inside_a_library_call_counts_as_the_user_stopping_the_command() -> None:
    assert interrupted(_as_duckdb_raises_it())
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("stopped") from None  # said without its cause, still in its context
    except RuntimeError as exc:
        assert interrupted(exc)


def test_a_library_error_without_ctrl_c_is_still_a_bug_to_report() -> None:
    try:
        duckdb.connect().execute("SELECT * FROM no_such_table")
    except duckdb.Error as exc:
        assert not interrupted(exc)
    try:
        try:
            raise ValueError("inner")
        except ValueError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as exc:
        assert not interrupted(exc)
