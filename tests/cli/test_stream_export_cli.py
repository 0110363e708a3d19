"""`tenant-events stream` / `export` as a user runs them: subprocesses against the real simulator."""

from __future__ import annotations

import csv
import io
import re
import signal
import subprocess
import sys
import time

import orjson
import pytest

from helpers.fixtures_engine import OLD, cli, demo_stream, reference_ids, stored_ids
from helpers.slack import bound
from tenant_events.store import EventReader


def wait_stored(db, n, proc, timeout=30.0):
    deadline = time.monotonic() + bound(timeout)
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"stream exited {proc.returncode}: {proc.stderr.read()}")
        if db.exists():
            try:
                with EventReader(db) as reader:
                    if reader.count() >= n:
                        return
            except Exception:
                pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} events stored in {bound(timeout):.0f} s")


def test_stream_with_env_token_then_sigterm_exits_0_and_export_round_trips(make_simulator, tmp_path):
    sim = make_simulator(backlog=300, heartbeat=0.2)
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    jsonl = tmp_path / "live.jsonl"
    proc = demo_stream(
        sim,
        tmp_path,
        "--from-timestamp",
        OLD,
        "--jsonl",
        str(jsonl),
        env=env,
    )
    db = tmp_path / "tenants" / "demo.sqlite3"
    wait_stored(db, 300, proc)
    sim.emit(20)
    wait_stored(db, 320, proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "320 events stored" in err and "live" in err
    assert re.search(r"demo takes [\d.]+ (KB|MB) live, 0 B archived on disk", err), err  # the tiers' disk
    assert env["TENANT_EVENTS_ACCESS_TOKEN"] not in err + out

    export = subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--data-dir", str(tmp_path), "--jsonl", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert export.returncode == 0, export.stderr
    lines = [orjson.loads(line) for line in export.stdout.splitlines()]
    assert [m["event"]["id"] for m in lines] == reference_ids(sim, 320)
    assert all(set(m) == {"type", "offset", "event"} and m["type"] == m["event"]["type"] for m in lines)
    assert jsonl.read_text().splitlines() == export.stdout.splitlines()  # --jsonl wrote the same, live

    as_csv = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "export",
            "--data-dir",
            str(tmp_path),
            "--tenant",
            "demo",
            "--csv",
            str(tmp_path / "out.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert as_csv.returncode == 0, as_csv.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out.csv").read_text())))
    assert [r["event_id"] for r in rows] == [m["event"]["id"] for m in lines]


def test_stream_with_client_credentials(make_simulator, tmp_path):
    sim = make_simulator(backlog=40, heartbeat=0.2)
    env = {"TENANT_EVENTS_CLIENT_SECRET": sim.service_client_secret, "TENANT_EVENTS_ACCESS_TOKEN": ""}
    proc = cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "svc",
        "--data-dir",
        str(tmp_path),
        "--client-id",
        sim.service_client_id,
        "--from-timestamp",
        OLD,
        env=env,
    )
    wait_stored(tmp_path / "tenants" / "svc.sqlite3", 40, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert sim.service_client_secret not in err
    assert len(stored_ids(tmp_path / "tenants" / "svc.sqlite3")) == 40


@pytest.mark.parametrize(
    ("args", "env", "code", "needle"),
    [
        (["--event-type", "user.exploded"], {}, 2, "unknown event type 'user.exploded'"),
        (["--from-timestamp", "yesterday"], {}, 2, "'yesterday' is not a date-time"),
        ([], {"TENANT_EVENTS_ACCESS_TOKEN": ""}, 4, "sign in first: tenant-events login"),
        (["--base-url-suffix", "/api/v9"], {}, 7, "not found"),
        (["--scope", "openid"], {}, 7, "read:events"),
        (["--base-url", "http://example.com/api/v2"], {}, 3, "--base-url"),
    ],
)
def test_stream_errors_are_one_clear_line_with_distinct_exit_codes(
    make_simulator, tmp_path, args, env, code, needle
):
    sim = make_simulator()
    token = sim.mint_token(scope="openid") if "--scope" in args else sim.mint_token()
    base = sim.base_url
    if "--base-url-suffix" in args:
        base, args = sim.auth_url + args[1], []
    if "--scope" in args:
        args = []
    full_env = {"TENANT_EVENTS_ACCESS_TOKEN": token, **env}
    cmd = [
        "stream",
        "--data-dir",
        str(tmp_path),
        *(args if "--base-url" in args else ["--base-url", base, *args]),
    ]
    proc = cli(*cmd, env=full_env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert needle in err
    assert token not in err


def test_export_errors(tmp_path):
    nothing = subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--data-dir", str(tmp_path), "--jsonl", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert nothing.returncode == 2 and "no stored events" in nothing.stderr
    (tmp_path / "tenants").mkdir()
    unknown = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "export",
            "--data-dir",
            str(tmp_path),
            "--tenant",
            "nope",
            "--csv",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 3 and "'nope'" in unknown.stderr
