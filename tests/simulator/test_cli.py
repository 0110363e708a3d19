"""`tenant-events simulator` as a user runs it: a subprocess that prints its URLs and stops on SIGTERM."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx

EXE = str(Path(sys.executable).with_name("tenant-events"))


def test_cli_prints_ready_line_serves_and_stops_on_sigterm(tmp_path):
    proc = subprocess.Popen(
        [
            EXE,
            "simulator",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "sim"),
            "--backlog",
            "25",
            "--rate",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with proc:  # closes its pipes on the way out, whatever happens
        try:
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            match = re.fullmatch(r"Tenant simulator ready: base_url=(\S+)/api/v2 auth_url=(\S+)\n", ready)
            assert match and match.group(1) == match.group(2), ready
            auth_url = match.group(2)
            demo, service = proc.stdout.readline(), proc.stdout.readline()
            assert "tenant-events-demo" in demo
            secret = re.search(r"id=tenant-events-service secret=(\S+)", service)
            assert secret
            token = httpx.post(
                f"{auth_url}/oauth/token",
                data={
                    "grant_type": "client_credentials",
                    "client_id": "tenant-events-service",
                    "client_secret": secret.group(1),
                    "audience": f"{auth_url}/api/v2/",
                },
            ).json()["access_token"]
            with (
                httpx.Client(timeout=5) as client,
                client.stream(
                    "GET",
                    f"{auth_url}/api/v2/events",
                    params={"from_timestamp": "2000-01-01T00:00:00Z"},
                    headers={"Authorization": f"Bearer {token}"},
                ) as response,
            ):
                assert response.status_code == 200
                chunks = response.iter_bytes()
                first = next(chunks)
                assert first.startswith(b":connected")
                proc.send_signal(signal.SIGTERM)
                rest = b"".join(chunks)  # the server ends open streams when it stops
            assert proc.wait(timeout=15) == 0
            assert (first + rest).count(b'","event":{') == 25
        finally:
            if proc.poll() is None:
                proc.kill()
    assert (tmp_path / "sim" / "signing-key.pem").exists() and (
        tmp_path / "sim" / "simulator.sqlite3"
    ).exists()


def test_cli_rejects_bad_options_naming_them():
    result = subprocess.run(
        [EXE, "simulator", "--id-length", "17", "--port", "0"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 3
    assert "id_length" in result.stderr and "17" in result.stderr
    result = subprocess.run(
        [EXE, "simulator", "--stream-error", "oops", "--ephemeral"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 3 and "oops" in result.stderr
