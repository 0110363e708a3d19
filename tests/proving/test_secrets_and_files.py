"""No secret in logs, crash reports, exported files, process arguments or the settings file, and every file
the app writes readable by the user only (proving ground, security). The tests plant known secrets, run the real
CLI against the real simulator, then search everything the app left behind for them."""

from __future__ import annotations

import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.fixtures_engine import OLD, cli
from helpers.slack import bound
from tenant_events.demo_simulator import spawn_simulator
from tenant_events.problem_sink import ProblemSink
from tenant_events.simulator.testing import start_simulator
from tenant_events.store import EventReader


def cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def everything_written(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


def wait_stored(db: Path, n: int, proc: subprocess.Popen[str], limit: float = 30) -> None:
    deadline = time.monotonic() + bound(limit)
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1]
        if db.exists():
            try:
                with EventReader(db) as reader:
                    if reader.count() >= n:
                        return
            except Exception:  # the writer may be creating the schema right now
                pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} events stored in {bound(limit):.0f} s")


def stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return out, err


@dataclass
class Run:
    root: Path
    console: str
    token: str
    secret: str


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Stream with an access token, then with client credentials, then export: what a service user runs."""
    sim = start_simulator(backlog=300, rate=0, burst_every=0)
    tmp_path = tmp_path_factory.mktemp("secrets")
    try:
        data = tmp_path / "data"
        token = sim.mint_token(ttl=3600)
        secret = sim.service_client_secret
        runs = [
            (["--name", "bytoken"], {"TENANT_EVENTS_ACCESS_TOKEN": token, "TENANT_EVENTS_LOG_JSON": "1"}),
            (
                ["--name", "byclient", "--client-id", sim.service_client_id],
                {"TENANT_EVENTS_CLIENT_SECRET": secret, "TENANT_EVENTS_LOG_JSON": "1"},
            ),
        ]
        said = []
        for extra, env in runs:
            proc = cli(
                "stream",
                "--base-url",
                sim.base_url,
                "--data-dir",
                str(data),
                "--from-timestamp",
                OLD,
                "--jsonl",
                str(tmp_path / f"{extra[1]}.jsonl"),
                *extra,
                env=env,
            )
            wait_stored(data / "tenants" / f"{extra[1]}.sqlite3", 300, proc)
            argv = cmdline(proc.pid)
            assert sim.base_url in argv  # it is the right process
            assert token not in argv and secret not in argv, "a secret is on the command line"
            said.extend(stop(proc))
        export = subprocess.run(
            [
                sys.executable,
                "-m",
                "tenant_events",
                "export",
                "--data-dir",
                str(data),
                "--tenant",
                "bytoken",
                "--jsonl",
                str(tmp_path / "export.jsonl"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        said.extend((export.stdout, export.stderr))
        assert (tmp_path / "export.jsonl").stat().st_size > 0
        yield Run(tmp_path, "\n".join(said), token, secret)
    finally:
        sim.stop()


def test_tokens_and_client_secrets_stay_out_of_argv_logs_exports_and_data(cli_run):
    found = everything_written(cli_run.root) + cli_run.console
    assert (cli_run.root / "data" / "logs").is_dir()
    for name, value in (("access token", cli_run.token), ("client secret", cli_run.secret)):
        assert value not in found, f"the {name} was written to a file, a log or the console"
    assert not re.search(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ", found), "a JWT was written somewhere"


def test_the_database_settings_and_logs_are_private(cli_run):
    assert_private(cli_run.root / "data")


def test_every_file_the_cli_writes_is_private_including_wal_and_jsonl(cli_run):
    """D1/D2: SQLite's -wal/-shm took the database's umask-born 0644, and `stream --jsonl` created 0644."""
    assert_private(cli_run.root)


def assert_private(root: Path, skip: tuple[str, ...] = ()) -> None:
    """Files 0600, directories 0700 (the data dir and below): other local users must not read events, logs
    or settings. `root` itself is the test's tmp dir when it is not the data dir."""
    loose = []
    for path in root.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.name.endswith(skip):
            continue
        if mode & 0o077 and (path.is_dir() or path.is_file()):
            loose.append(f"{path} {oct(mode)}")
    assert not loose, "readable by others: " + ", ".join(loose)


def test_the_demo_simulator_child_gets_no_secret_on_its_command_line(tmp_path):
    sim = spawn_simulator(tmp_path / "sim")
    try:
        assert sim.process.stdout is not None
        secret = ""
        deadline = time.monotonic() + bound(30)
        while not secret and time.monotonic() < deadline:
            line = sim.process.stdout.readline()
            assert line, "the simulator exited before printing its service client"
            if m := re.search(r"secret=(\S+)", line):
                secret = m.group(1)
        argv = cmdline(sim.process.pid)
        assert "simulator" in argv and secret and secret not in argv
        key = (tmp_path / "sim").rglob("*.pem")
        for path in key:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        sim.process.kill()
        sim.process.wait(10)
        sim.process.stdout.close()


@pytest.mark.expect_warning_logs
def test_a_crash_report_does_not_carry_a_token():
    """An uncaught exception whose text holds a bearer token (an httpx error echoing a header, a URL with
    code=) becomes a problem with a traceback the user can copy: the token must not be in it."""
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
    sink = ProblemSink()
    try:
        raise RuntimeError(f"request failed: Authorization: Bearer {jwt} url=/cb?code=SplxlOBeZQQYbYS6WxSbIA")
    except RuntimeError as exc:
        sink.report_exception(exc)
    (problem,) = sink.history
    shown = f"{problem.title}\n{problem.text}\n{problem.details}"
    assert "request failed" in shown
    assert jwt not in shown and "SplxlOBeZQQYbYS6WxSbIA" not in shown


def test_sign_in_leaves_no_token_in_the_settings_file_logs_or_output(simulator, tmp_path):
    """`tenant-events login` as a user runs it (the test is the browser): the refresh token goes to the keyring
    or nowhere; the settings file, the logs and the console hold no token, and the data dir stays private."""
    import os

    from helpers.browser import cli_login
    from helpers.sign_ins import forget_token, stored_token

    data = tmp_path / "data"
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"}
    login = cli_login(simulator.auth_url, simulator.demo_client_id, str(data), "--name", "proving", env=env)
    url, final, out, err = login.url, login.final, login.out, login.err
    assert login.returncode == 0, err
    code = re.search(r"[?&]code=([^&]+)", final)
    assert code
    written = everything_written(data) + out + err + url
    stored = stored_token(data, "proving")
    try:
        assert "Signed in to proving" in out
        assert code.group(1) not in everything_written(data) + out + err, "the authorization code was written"
        assert not re.search(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ", written), "a JWT was written"
        assert not re.search(r"v1\.[A-Za-z0-9_-]{40,}", written), "a refresh token was written"
        if stored:
            assert stored not in written
        settings = (data / "settings.json").read_text()
        assert not re.search(r"(?i)token|secret|verifier", settings), settings
        assert_private(data)
    finally:
        if stored:
            forget_token(data, "proving")
