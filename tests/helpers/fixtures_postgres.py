"""A PostgreSQL server of a test's own (Debian's package), for a team archive's DuckLake catalog.

One cluster in a temporary folder on a free port: local connections (the socket in that folder) trusted for the
set-up, TCP connections signed in with a password (SCRAM) as a real team's server would ask. Two users: `relay`,
which owns each lake's database and writes it, and `viewer`, which may only read what `relay` made.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

import pytest

RELAY_PASSWORD = "relay-pw-Z8q"  # a test's throwaway cluster
VIEWER_PASSWORD = "viewer-pw-K3m"


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Postgres:
    bin_dir: Path
    home: Path
    port: int
    made: Iterator[int] = field(default_factory=lambda: count(1))

    def sql(self, database: str, statement: str) -> str:
        """`statement` run as the cluster's superuser over the local socket."""
        out = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-h",
                str(self.home),
                "-p",
                str(self.port),
                "-U",
                "lake",
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-Atqc",
                statement,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return out.stdout

    def new_lake(self) -> str:
        """A database of its own for one lake's catalog, owned by `relay`, readable by `viewer`; its name."""
        name = f"lake{next(self.made)}"
        self.sql("postgres", f"CREATE DATABASE {name} OWNER relay")
        self.sql(name, "ALTER DEFAULT PRIVILEGES FOR ROLE relay GRANT SELECT ON TABLES TO viewer")
        self.sql(name, "ALTER DEFAULT PRIVILEGES FOR ROLE relay GRANT USAGE ON SCHEMAS TO viewer")
        self.sql(name, "GRANT USAGE ON SCHEMA public TO viewer")
        return name

    def catalog(self, database: str, user: str) -> str:
        return f"postgres:dbname={database} host=127.0.0.1 port={self.port} user={user}"


@contextlib.contextmanager
def running_postgres() -> Iterator[Postgres]:
    """A cluster of its own, stopped and removed after (as the `postgres` user when run as root: initdb refuses
    root). SkipTest-free: the caller decides what a missing server means (`pg_bin()` is None)."""
    bin_dir = pg_bin()
    assert bin_dir is not None, "PostgreSQL is not installed"
    home = Path(tempfile.mkdtemp(prefix="tenant-events-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = home / "data"
    subprocess.run(
        [
            *as_user,
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "lake",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ],
        check=True,
        capture_output=True,
    )
    port = _free_port()
    start = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "-t", "120"]
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
    try:
        subprocess.run([*start, "-o", options, "start"], check=True, capture_output=True)
        server = Postgres(bin_dir, home, port)
        server.sql("postgres", f"CREATE ROLE relay LOGIN PASSWORD '{RELAY_PASSWORD}'")
        server.sql("postgres", f"CREATE ROLE viewer LOGIN PASSWORD '{VIEWER_PASSWORD}'")
        yield server
    finally:
        subprocess.run([*start, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """The cluster, for the worker's tests (each takes databases of its own; one cluster for the session, since
    the process's DuckDB keeps every lake it attached); skipped, saying why, where Debian's PostgreSQL is not
    installed."""
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (Debian's postgresql package; ./run test installs it)")
    with running_postgres() as server:
        yield server
