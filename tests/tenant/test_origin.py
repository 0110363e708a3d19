"""The record of which tenant a database holds, written by several processes of one profile at once."""

from __future__ import annotations

import multiprocessing
import stat
from pathlib import Path

from tenant_events.paths import AppPaths
from tenant_events.tenant.origin import record_origin, recorded_origin


def _record_many(root: str, url: str, rounds: int) -> None:
    paths = AppPaths.resolve(root)
    for _ in range(rounds):
        record_origin(paths, "twice", url)


def test_two_processes_recording_the_same_tenant_at_once_both_succeed(tmp_path: Path) -> None:
    """Two `stream`s of one profile each record the tenant when they open the database: one process's scratch
    file must never be renamed away under the other (seen: "cannot write …origin.json: No such file")."""
    paths = AppPaths.resolve(tmp_path).ensure()
    paths.databases_dir.mkdir(mode=0o700)
    paths.database_file("twice").touch()
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_record_many, args=(str(tmp_path), "http://127.0.0.1:9/", 400)) for _ in range(3)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0, 0]
    assert recorded_origin(paths, "twice") == "http://127.0.0.1:9"
    record = paths.databases_dir / "twice.origin.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert sorted(p.name for p in paths.databases_dir.iterdir()) == ["twice.origin.json", "twice.sqlite3"]
