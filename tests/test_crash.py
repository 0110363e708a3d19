"""Crash reports: redacted, private, one clear line on stderr; the run marker tells the next start."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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


def test_run_marker_detects_a_run_that_died(tmp_path):
    with RunMarker(tmp_path) as first:
        assert not first.previous_run_crashed
        assert (tmp_path / "running.pid").read_text() == str(os.getpid())
    assert not (tmp_path / "running.pid").exists()  # clean exit removes it

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "running.pid").write_text(str(dead.pid))  # what a SIGKILLed run leaves behind
    with RunMarker(tmp_path) as again:
        assert again.previous_run_crashed


def test_run_marker_of_a_live_process_is_not_a_crash(tmp_path):
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (tmp_path / "running.pid").write_text(str(alive.pid))
        with RunMarker(tmp_path) as marker:
            assert not marker.previous_run_crashed
    finally:
        alive.kill()
        alive.wait()
