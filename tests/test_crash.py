"""Crash reports: redacted, private, one clear line on stderr; the run marker tells the next start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

from tenant_events.crash import RunMarker, latest_report, write_report

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImF1ZCI6Inh5eiJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"


def test_report_is_readable_private_and_redacted(tmp_path):
    try:
        raise RuntimeError(f"refresh failed with refresh_token={JWT[:40]}xyz and Bearer {JWT}")
    except RuntimeError as exc:
        path = write_report(tmp_path, exc, context="token refresh")
    assert path is not None and path.parent == tmp_path
    assert path.stat().st_mode & 0o777 == 0o600
    text = path.read_text()
    assert "Tenant Events" in text and "Traceback:" in text and "RuntimeError" in text
    assert "Where: token refresh" in text
    assert JWT not in text and "eyJ" not in text and "[redacted]" in text
    assert latest_report(tmp_path) == path


def test_unexpected_cli_error_is_one_line_plus_a_report(tmp_path):
    # A subcommand with a bug, registered through the same COMMANDS seam every real subcommand uses.
    script = textwrap.dedent(
        f"""
        import sys, types
        import tenant_events.cli.main as m
        boom = types.ModuleType("tenant_events.cli.boom_cmd")
        def register(sub):
            p = sub.add_parser("boom")
            p.add_argument("--data-dir")
            p.set_defaults(run=lambda args: (_ for _ in ()).throw(KeyError("access_token={JWT}")))
        boom.register = register
        sys.modules["tenant_events.cli.boom_cmd"] = boom
        m.COMMANDS = (*m.COMMANDS, "boom_cmd")
        sys.exit(m.main(["boom", "--data-dir", {str(tmp_path)!r}]))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tenant-events: unexpected error: KeyError:") and "the report is in" in last
    assert JWT not in proc.stderr
    report = latest_report(tmp_path / "logs")
    assert report is not None and str(report) in last
    assert "KeyError" in report.read_text() and JWT not in report.read_text()


def _dead_pid() -> int:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    return dead.pid


def test_run_marker_is_per_instance_and_removed_by_its_owner_only(tmp_path):
    other = tmp_path / "running" / "999999999.json"  # another instance's marker, as far as this one knows
    with RunMarker(tmp_path) as first:
        assert not first.previous_run_crashed
        mine = tmp_path / "running" / f"{os.getpid()}.json"
        assert json.loads(mine.read_text())["pid"] == os.getpid()
        alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            other.write_text(json.dumps({"pid": alive.pid, "started": time.time()}))
            with RunMarker(tmp_path) as second:  # e.g. a start that hands over to the running instance
                assert not second.previous_run_crashed
            assert other.exists(), "a live instance's marker is not anyone else's to remove"
        finally:
            alive.kill()
            alive.wait()
    assert not mine.exists()  # a clean exit removes its own marker


def test_run_marker_detects_a_run_that_died(tmp_path):
    pid = _dead_pid()
    (tmp_path / "running").mkdir()
    (tmp_path / "running" / f"{pid}.json").write_text(json.dumps({"pid": pid, "started": time.time() - 60}))
    with RunMarker(tmp_path) as again:
        assert [d.pid for d in again.dead_runs] == [pid]
        assert again.dead_runs[0].report is None
    assert not (tmp_path / "running" / f"{pid}.json").exists()  # told once
    with RunMarker(tmp_path) as later:
        assert not later.previous_run_crashed


def test_a_dead_run_comes_with_its_own_crash_report(tmp_path):
    logs = tmp_path / "logs"
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from tenant_events.crash import RunMarker, write_report
        marker = RunMarker(Path({str(tmp_path)!r}), Path({str(logs)!r})).__enter__()
        try:
            raise RuntimeError("Bearer {JWT}")
        except RuntimeError as exc:
            write_report(Path({str(logs)!r}), exc)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    subprocess.run([sys.executable, "-c", script], timeout=60)
    with RunMarker(tmp_path, logs) as marker:
        (dead,) = marker.dead_runs
    assert dead.report is not None and dead.report.name.endswith(f"-{dead.pid}.txt")
    assert JWT not in dead.report.read_text()


def test_legacy_marker_of_a_dead_run_is_a_crash(tmp_path):
    (tmp_path / "running.pid").write_text(str(_dead_pid()))  # what an older version left behind
    with RunMarker(tmp_path) as marker:
        assert marker.previous_run_crashed
    assert not (tmp_path / "running.pid").exists()


def test_a_reused_pid_does_not_hide_a_dead_run(tmp_path):
    (tmp_path / "running").mkdir()
    # This very pid, but started at another time: the process that wrote it is gone.
    stale = {"pid": os.getpid(), "started": 1.0, "start_id": "1"}
    (tmp_path / "running" / f"{os.getpid()}.json").write_text(json.dumps(stale))
    with RunMarker(tmp_path) as marker:
        assert [d.pid for d in marker.dead_runs] == [os.getpid()]


def test_run_marker_of_a_live_process_is_not_a_crash(tmp_path):
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "running.pid").write_text(str(alive.pid))
        with RunMarker(tmp_path) as marker:
            assert not marker.previous_run_crashed
        assert (tmp_path / "running.pid").exists()
    finally:
        alive.kill()
        alive.wait()
