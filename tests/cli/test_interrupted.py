"""Ctrl-C while DuckDB runs a query (an archive read) stops the command quietly with 130, as anywhere else."""

from __future__ import annotations

import os
import signal
import threading

import duckdb
import pytest

from tenant_events.cli.main import interrupted


def _stopped_query() -> RuntimeError:
    """The error DuckDB raises when Ctrl-C reaches it mid-query: its own, caused by the KeyboardInterrupt."""
    conn = duckdb.connect()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        conn.execute("SELECT count(*) FROM range(100000000000) t(x) WHERE x % 7 = 3").fetchall()
    except RuntimeError as exc:
        return exc
    finally:
        timer.cancel()
        conn.close()
    pytest.fail("the query ended before Ctrl-C reached it")


def test_ctrl_c_inside_a_duckdb_query_counts_as_the_user_stopping_the_command() -> None:
    exc = _stopped_query()
    assert not isinstance(exc, KeyboardInterrupt)  # what the command's code sees: not a KeyboardInterrupt
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
