"""A team archive's databases and lake as the tests and bench/team_archive.py look at them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from helpers.fixtures_postgres import RELAY_PASSWORD, VIEWER_PASSWORD, Postgres
from tenant_events.store import Batch, EventRow, StoreWriter, duck
from tenant_events.store.archive_lake import NoLakeYet, attach, use_password
from tenant_events.store.team_view import record
from tenant_events.values.team_archive import Lake


def filled_store(path: Path, rows: list[EventRow], lake: Lake | None = None, batch: int = 400) -> Path:
    """A database holding `rows` (indexed), read with `lake` when given."""
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), batch):
            writer.commit_sync(Batch(events=rows[at : at + batch]))
        writer.index_all_sync()
        if lake is not None:
            writer.run_archive_job(lambda c: record(c, lake)).result()
    finally:
        writer.close()
    return path


def lake_ids(lake: Lake) -> list[str]:
    """The lake's events in its order (none before the relay made it and its tables)."""
    try:
        alias = attach(lake, read_only=True)
    except NoLakeYet:
        return []
    cur = duck.cursor()
    try:
        rows = cur.execute(f"SELECT event_id FROM {alias}.events ORDER BY seq").fetchall()
    except duckdb.CatalogException:
        return []
    finally:
        cur.close()
    return [str(r[0]) for r in rows]


def lakes(pg: Postgres, shared: Path) -> tuple[Lake, Lake]:
    """The same lake as its relay writes it and as a viewer reads it (another catalog user)."""
    name = pg.new_lake()
    shared.mkdir(exist_ok=True)
    relay, viewer = (
        Lake(pg.catalog(name, "relay"), str(shared)),
        Lake(pg.catalog(name, "viewer"), str(shared)),
    )
    use_password(relay.catalog, RELAY_PASSWORD)
    use_password(viewer.catalog, VIEWER_PASSWORD)
    return relay, viewer


ROOT = Path(__file__).resolve().parents[2]


def child_env() -> dict[str, str]:
    """This test's environment for a Python child that imports the app (and the test helpers)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "desktop"), *sys.path])}


def lake_child(script: str, args: list[str], password: str) -> subprocess.Popen[str]:
    """`python -c script *args`, handed the catalog's password on its stdin (never on a command line); its
    stdout a pipe of text lines."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(password + "\n")
    proc.stdin.close()
    return proc
