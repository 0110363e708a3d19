"""Every CLI error is one line on stderr with its exit code: no traceback, no crash report, nothing twice.

Each case runs the real command in a subprocess, as a shell user would (pipes included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tenant_events.store import Batch, EventReader, StoreWriter

TE = [sys.executable, "-m", "tenant_events"]


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A data dir with one tenant of 20,000 events: far more than a pipe buffer holds as CSV or JSONL."""
    from helpers.events_factory import row

    data = tmp_path / "data"
    writer = StoreWriter(data / "tenants" / "acme.sqlite3")
    try:
        for start in range(0, 20_000, 2000):
            rows = [row(i) for i in range(start, start + 2000)]
            writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    finally:
        writer.close()
    return data


def _no_crash_report(data: Path) -> None:
    assert not list(data.glob("logs/crash-*.txt")), "a user's mistake is not a crash"


@pytest.mark.parametrize("fmt", ["--csv", "--jsonl"])
def test_export_into_a_closed_pipe_exits_quietly(stored, fmt):
    # `export | head -n 3`, with the shell's own pipe and head; pipefail reports export's own exit code.
    cmd = " ".join([*TE, "export", "--data-dir", str(stored), fmt, "-"])
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{cmd} | head -n 3"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": ""},
    )
    assert len(proc.stdout.splitlines()) == 3
    assert proc.stderr == "", proc.stderr  # no "Exception ignored", no BrokenPipeError, no "unexpected error"
    assert proc.returncode == 0
    _no_crash_report(stored)


def test_stream_into_a_closed_pipe_stops_quietly(make_simulator, tmp_path):
    sim = make_simulator(backlog=3000, heartbeat=0.2)
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    cmd = " ".join(
        [
            *TE,
            "stream",
            "--base-url",
            sim.base_url,
            "--data-dir",
            str(tmp_path),
            "--from-timestamp",
            "2000-01-01T00:00:00Z",
            "--jsonl",
            "-",
        ]
    )
    proc = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"{cmd} | head -n 3"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert len(proc.stdout.splitlines()) == 3
    assert proc.returncode == 0, proc.stderr
    for noise in ("Traceback", "Exception ignored", "BrokenPipeError", "unexpected error"):
        assert noise not in proc.stderr, proc.stderr
    assert "events stored" in proc.stderr.splitlines()[-1]
    _no_crash_report(tmp_path)


def test_export_to_a_missing_directory_is_one_line(stored):
    target = "/no/such/dir/x.jsonl"
    proc = subprocess.run(
        [*TE, "export", "--data-dir", str(stored), "--jsonl", target],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert target in proc.stderr and "/no/such/dir" in proc.stderr and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr
    _no_crash_report(stored)


def test_stream_jsonl_to_a_missing_directory_is_one_line(stored):
    target = "/no/such/dir/live.jsonl"
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "not-used"}
    proc = subprocess.run(
        [
            *TE,
            "stream",
            "--base-url",
            "http://127.0.0.1:9/api/v2",
            "--data-dir",
            str(stored),
            "--jsonl",
            target,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert target in proc.stderr and "does not exist" in proc.stderr
    _no_crash_report(stored)


def test_export_of_an_unknown_tenant_is_said_once(stored):
    proc = subprocess.run(
        [*TE, "export", "--data-dir", str(stored), "--tenant", "nope", "--csv", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("tenant-events: ") and "'nope'" in proc.stderr and "acme" in proc.stderr


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["export", "--jsonl"], "acme.sqlite3"),
        (["export", "--csv"], "acme.sqlite3-wal"),
        (["alerts", "--jsonl"], "acme.sqlite3-shm"),
        (["timeline", "user:auth0|1", "--jsonl"], "acme.sqlite3"),
        (["stream", "--base-url", "http://127.0.0.1:9/api/v2", "--jsonl"], "acme.sqlite3-wal"),
        (["stream", "--base-url", "http://127.0.0.1:9/api/v2", "--alerts-jsonl"], "acme.sqlite3"),
    ],
)
def test_an_output_path_naming_a_database_file_is_refused_before_anything_opens_it(stored, command, name):
    target = stored / "tenants" / name
    before = sorted(p.name for p in (stored / "tenants").iterdir())
    database = stored / "tenants" / "acme.sqlite3"
    size = database.stat().st_size
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "not-used"}
    proc = subprocess.run(
        [*TE, *command, str(target), "--data-dir", str(stored)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert f"will not write {target}: it is {name}, a database file of the data dir" in proc.stderr
    assert "Traceback" not in proc.stderr
    # Nothing opened it: no -wal or -shm made, the file as it was.
    assert sorted(p.name for p in (stored / "tenants").iterdir()) == before
    assert database.stat().st_size == size
    _no_crash_report(stored)


def test_a_link_or_a_relative_path_to_a_database_file_is_refused_too(stored, tmp_path):
    database = stored / "tenants" / "acme.sqlite3"
    (tmp_path / "sym.jsonl").symlink_to(database)
    os.link(database, tmp_path / "hard.jsonl")
    for target, cwd in (
        (str(tmp_path / "sym.jsonl"), tmp_path),
        (str(tmp_path / "hard.jsonl"), tmp_path),
        ("tenants/../tenants/acme.sqlite3", stored),
    ):
        proc = subprocess.run(
            [*TE, "export", "--data-dir", str(stored), "--jsonl", target],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=cwd,
        )
        assert proc.returncode == 2, (target, proc.stderr)
        assert "a database file of the data dir" in proc.stderr and "acme.sqlite3" in proc.stderr, proc.stderr
    with EventReader(database) as reader:
        assert reader.count() == 20_000
