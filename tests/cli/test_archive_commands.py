"""`export` and `timeline` over a tenant whose older events are in the archive tier give what they give over a
single-tier store of the same events, byte for byte (docs/archive.md "One view")."""

from __future__ import annotations

import time

import orjson
import pytest

from helpers.cli_here import run_here
from helpers.history import history
from tenant_events.paths import AppPaths
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.values.retention import Retention

DAY = 86400.0


@pytest.fixture(scope="module")
def two_dirs(tmp_path_factory):
    rows = history(1500, time.time() - 80 * DAY, 80 * DAY / 1500, seed=5)
    dirs = []
    for archived in (False, True):
        paths = AppPaths.resolve(tmp_path_factory.mktemp("data")).ensure()
        writer = StoreWriter(paths.database_file("acme"))
        try:
            for at in range(0, len(rows), 500):
                writer.commit_sync(Batch(events=rows[at : at + 500]))
            writer.index_all_sync()
            if archived:
                assert keep(writer, Retention(keep_live_days=20, settle_seconds=0), move_rows=400).moved > 800
        finally:
            writer.close()
        dirs.append(paths.data_dir)
    ids = {}
    for row in rows:
        obj = orjson.loads(row.raw)["event"]["data"].get("object", {})
        if row.type == "user.created":
            ids.setdefault("user", obj["user_id"])
        if row.type == "organization.created":
            ids.setdefault("org", obj["id"])
    return dirs, ids


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--jsonl", "-"],
        ["export", "--csv", "-"],
        ["export", "--jsonl", "-", "--query", "type:user.* -purpose:test"],
        ["export", "--jsonl", "-", "--query", "org:acme OR ada"],
    ],
    ids=["jsonl", "csv", "query", "query or text"],
)
def test_export_reads_both_tiers_as_one(two_dirs, args):
    (one, two), _ids = two_dirs
    outputs = [run_here([args[0], "--data-dir", str(d), "--tenant", "acme", *args[1:]]) for d in (one, two)]
    assert outputs[0].returncode == outputs[1].returncode == 0, outputs[1].stderr
    assert outputs[0].stdout == outputs[1].stdout and outputs[0].stdout.count("\n") > 10


@pytest.mark.parametrize("kind", ["user", "org"])
def test_timeline_reads_both_tiers_as_one(two_dirs, kind):
    (one, two), ids = two_dirs
    obj = f"{kind}:{ids[kind]}"
    outputs = [
        run_here(["timeline", "--data-dir", str(d), "--tenant", "acme", obj, "--jsonl", "-"])
        for d in (one, two)
    ]
    assert outputs[0].returncode == outputs[1].returncode == 0, outputs[1].stderr
    assert outputs[0].stdout == outputs[1].stdout and outputs[0].stdout
