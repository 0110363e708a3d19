"""The process's one DuckDB engine, which reads and writes the archive tier's Parquet files (archive_*.py).

DuckDB is imported only when an archive is touched, so a command over a store without one never pays for it.
Nothing is ever downloaded: automatic extension installing and loading are off, and the only extensions used
(DuckLake, PostgreSQL and httpfs, for a team's shared archive and its object storage) are loaded from the files
their Python packages (`duckdb-extension-*`, pinned to the same version as DuckDB) install beside the code.
Parquet and JSON are built into DuckDB itself.

One in-memory database per process; every reader takes a cursor of its own (DuckDB cursors are separate
connections to one instance and may run at once, each on its own thread), so the buffer pool and the thread
pool are shared instead of multiplied by every reader the window opens. Its threads run below the priority of
the thread that first asks for it (thread_priority.py): DuckDB's work is background to whoever waits on it.
The archive's writer (a month's files, a merge) has an engine of its own with one thread (`writer_cursor`): its
work is one stream read and written in order, which the shared engine's two threads did with more CPU.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tenant_events.spill_folder import make_spill_folder
from tenant_events.thread_priority import lower_this_thread

if TYPE_CHECKING:
    import duckdb

THREADS: Final = 2
MEMORY_LIMIT: Final = "768MB"  # the buffer pool: Parquet pages read, sort runs while writing
# Settings that keep DuckDB from reaching the network on its own (docs/archive.md "No downloads").
OFFLINE: Final = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
}
_lock = threading.Lock()
_engine: duckdb.DuckDBPyConnection | None = None
_writer: duckdb.DuckDBPyConnection | None = None
_loaded: set[str] = set()


def engine() -> duckdb.DuckDBPyConnection:
    """The shared engine, made on first use; take a `cursor()` of it per thread."""
    global _engine
    with _lock:
        if _engine is None:
            import duckdb

            _pandas_known_missing()
            config: dict[str, str | bool | int | float | list[str]] = {
                **OFFLINE,
                "threads": THREADS,
                "memory_limit": MEMORY_LIMIT,
                "preserve_insertion_order": False,
                "temp_directory": make_spill_folder(),
            }
            # started on a thread of lower priority, whose niceness DuckDB's threads inherit: a year's scan on
            # every core leaves the thread that asked (the window's, drawing) its share first
            with ThreadPoolExecutor(1, "duckdb-start", initializer=lower_this_thread) as start:
                _engine = start.submit(duckdb.connect, ":memory:", config=config).result()
            _quiet(_engine)
        return _engine


def _pandas_known_missing() -> None:
    """DuckDB looks for pandas (an `import pandas`) twice each time it binds a query's parameters. Without pandas
    (the app has none) each look is a failed import that walks every import hook and folder of the path again,
    a quarter of a small query's CPU (0.67 → 0.48 ms). Once pandas is known missing, `import pandas` fails at
    once, as it would anyway."""
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None  # type: ignore[assignment]  # Python's own mark of a module not there


def cursor() -> duckdb.DuckDBPyConnection:
    """A connection of its own to the shared engine (one per reader or writer thread)."""
    conn = engine().cursor()
    _quiet(conn)
    return conn


def writer_cursor() -> duckdb.DuckDBPyConnection:
    """A connection to the archive writer's engine, made on first use: one of its own, with one thread, that
    keeps the order its statements read their rows in. Writing a month's files (a stream of JSON read and
    written as Parquet) on the shared engine's two threads, below the caller's priority, took 1.5 to 3 times
    the CPU of one thread on a busy machine, and longer (docs/archive.md "Measured"); the readers keep theirs."""
    global _writer
    with _lock:
        if _writer is None:
            import duckdb

            config: dict[str, str | bool | int | float | list[str]] = {
                **OFFLINE,
                "threads": 1,
                "memory_limit": MEMORY_LIMIT,
                "preserve_insertion_order": True,
                "temp_directory": make_spill_folder(),
            }
            _writer = duckdb.connect(":memory:", config=config)
        conn = _writer.cursor()
    _quiet(conn)
    return conn


def _quiet(conn: duckdb.DuckDBPyConnection) -> None:
    """No progress bar: DuckDB writes it to the terminal, into `export --jsonl -`'s output (a setting of each
    connection). No Python variable read as a table either: a table not there yet (a team archive's before the
    relay made it) must be an error, not whatever the caller's frame holds under that name."""
    conn.execute("SET enable_progress_bar = false")
    conn.execute("SET python_enable_replacements = false")


def extension_file(name: str) -> Path:
    """The extension's file as its package installed it, for this DuckDB version."""
    import duckdb

    package = importlib.import_module(f"duckdb_extension_{name}")
    path = Path(str(resources.files(package))) / "extensions" / f"v{duckdb.__version__}"
    return path / f"{name}.duckdb_extension"


def load_extension(name: str) -> None:
    """LOAD an extension from its package's file into the shared engine, once (never INSTALL: no download)."""
    with _lock:
        if name in _loaded:
            return
    path = extension_file(name)
    if not path.is_file():
        from tenant_events.errors import StorageError

        raise StorageError(
            f"the DuckDB {name} extension is not installed ({path} is missing)",
            f"reinstall Tenant Events with the duckdb-extension-{name} package",
        )
    conn = engine()
    conn.execute(f"LOAD '{_quoted(str(path))}'")
    with _lock:
        _loaded.add(name)


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def literal(text: str) -> str:
    """A DuckDB string literal: regular expressions must be constants for DuckDB to compile them once."""
    if "\x00" in text:
        raise ValueError("a NUL character cannot be part of a query")
    return "'" + _quoted(text) + "'"
