"""`tenant-events stream --base-url URL` after `tenant-events login`: the stored sign-in of the profile that
streams from that URL is used; other URLs and unknown profiles get one line naming what is stored.

Real subprocesses, the real simulator and the session's keyring (gnome-keyring under ./run test)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from helpers.browser import cli_login
from helpers.fixtures_engine import OLD, cli
from helpers.sign_ins import forget_token

REAL_KEYRING = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def _env() -> dict[str, str]:
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"}
    env.pop("TENANT_EVENTS_ACCESS_TOKEN", None)
    return env


@pytest.fixture
def sim(make_simulator):
    return make_simulator(backlog=5, heartbeat=0.2)


@pytest.fixture
def signed_in(sim, tmp_path):
    """`tenant-events login` against the simulator; yields (data dir, profile name); forgets the token after."""
    if not REAL_KEYRING:
        pytest.skip("needs the session keyring: run via ./run test (TENANT_EVENTS_REAL_KEYRING=1)")
    data = str(tmp_path / "data")
    login = cli_login(sim.auth_url, sim.demo_client_id, data, env=_env())
    assert login.returncode == 0, login.err
    name = login.out.strip().splitlines()[-1].split()[3]
    try:
        yield data, name
    finally:
        forget_token(data, name)


@pytest.mark.dbus
def test_base_url_of_a_stored_profile_uses_its_sign_in(sim, signed_in):
    data, name = signed_in
    # The same place written differently (upper-case scheme, a trailing slash): the stored sign-in is used.
    url = "HTTP" + sim.base_url.removeprefix("http") + "/"
    stream = cli(
        "stream", "--base-url", url, "--data-dir", data, "--from-timestamp", OLD, "--jsonl", "-", env=_env()
    )
    timer = threading.Timer(60, stream.kill)
    timer.start()
    try:
        assert stream.stdout is not None
        lines = [stream.stdout.readline() for _ in range(5)]
        stream.send_signal(signal.SIGTERM)
        _, err = stream.communicate(timeout=30)
    finally:
        timer.cancel()
        if stream.poll() is None:
            stream.kill()
    assert stream.returncode == 0, err
    assert all(line.startswith("{") for line in lines), err
    assert "5 events stored" in err, err
    assert "login" not in err, err
    # The events went to the profile's own database, as with --tenant.
    assert os.path.exists(os.path.join(data, "tenants", f"{name}.sqlite3"))


@pytest.mark.dbus
def test_base_url_without_a_matching_profile_names_the_stored_ones(sim, signed_in):
    data, name = signed_in
    other = "http://127.0.0.1:9/api/v2"
    proc = cli("stream", "--base-url", other, "--data-dir", data, env=_env())
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert other in line
    assert f"{name} ({sim.base_url})" in line, line
    assert "--tenant NAME" in line and "login --auth-url" in line and f"--base-url {other}" in line


def test_unknown_tenant_is_one_line_listing_the_known_profiles(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(
        '{"schema_version": 1, "tenants": [{"name": "acme", "domain": "acme.example", "client_id": "abc"},'
        ' {"name": "beta", "domain": "beta.example", "client_id": "def"}]}'
    )
    for command in ("stream", "login", "logout"):
        proc = cli(command, "--tenant", "nope", "--data-dir", str(data), env=_env())
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 3, (command, err)
        assert err.count("\n") == 1, (command, err)
        assert "'nope'" in err and "acme (https://acme.example/api/v2)" in err, err
        assert "beta (https://beta.example/api/v2)" in err, err
