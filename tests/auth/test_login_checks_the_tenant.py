"""`tenant-events login --auth-url URL` checks the tenant before it saves a profile: a domain that does not
exist or a server that is not this tenant's OpenID provider leaves no profile behind (one line, its exit code).
Real subprocesses against the real simulator's discovery document."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

TE = [sys.executable, "-m", "tenant_events"]


def _login(data, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"}
    return subprocess.run(
        [*TE, "login", "--no-browser", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
    )


def _json_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if not line.startswith("{")]


def test_a_domain_that_does_not_exist_saves_nothing(tmp_path):
    proc = _login(tmp_path, "--auth-url", "https://nonexistent.invalid", "--client-id", "abc")
    assert proc.returncode == 6, proc.stderr
    (line,) = _json_lines(proc.stderr)
    assert line.startswith(
        "tenant-events: cannot reach the tenant at https://nonexistent.invalid: the name does "
        "not resolve (DNS"
    )
    assert proc.stdout == ""
    assert not (tmp_path / "settings.json").exists()


def test_a_server_with_another_issuer_saves_nothing(simulator, tmp_path):
    port = simulator.auth_url.rsplit(":", 1)[1]
    proc = _login(tmp_path, "--auth-url", f"http://localhost:{port}", "--client-id", simulator.demo_client_id)
    assert proc.returncode == 3, proc.stderr
    (line,) = _json_lines(proc.stderr)
    assert line.startswith("tenant-events: --auth-url: the discovery document at http://localhost:")
    assert f"names issuer 'http://127.0.0.1:{port}/'" in line and "use the tenant's own domain" in line
    assert not (tmp_path / "settings.json").exists()


def test_the_tenant_checked_is_saved_with_the_exact_callback_url(simulator, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    proc = _login(
        tmp_path,
        "--auth-url",
        simulator.auth_url,
        "--client-id",
        simulator.demo_client_id,
        "--port",
        str(free),
        "--timeout",
        "1",
    )
    assert proc.returncode == 4, proc.stderr  # nobody signs in within 1 s: the profile is saved all the same
    saved = [line for line in _json_lines(proc.stderr) if line.startswith("Saved tenant profile")]
    assert saved == [
        f"Saved tenant profile '127-0-0-1-{simulator.auth_url.rsplit(':', 1)[1]}'. Callback URL(s) "
        f"to allow for client {simulator.demo_client_id}: http://127.0.0.1:{free}/callback"
    ]
    settings = json.loads((tmp_path / "settings.json").read_text())
    assert settings["tenants"][0]["redirect_ports"] == [free]
