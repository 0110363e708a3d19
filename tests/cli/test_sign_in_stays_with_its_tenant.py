"""A stored sign-in and a database stay with the tenant they were made for, and processes sharing a profile
refresh its rotating token one at a time (never a revoked family).

Real subprocesses, the real simulator (it rotates refresh tokens and revokes the whole family when a spent one is
presented, and counts what refresh requests met: GET /_sim/stats "refresh"), the session's real keyring."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import keyring
import pytest

from helpers.browser import cli_login
from helpers.fixtures_engine import OLD, cli
from helpers.sign_ins import forget_token, slot_key, stored_token
from helpers.slack import bound
from tenant_events.auth.secret_store import open_secret_store
from tenant_events.simulator.clients import EXACT_CLIENT_ID, EXACT_PORTS

REAL_KEYRING = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = pytest.mark.dbus


def _env() -> dict[str, str]:
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1"}
    env.pop("TENANT_EVENTS_ACCESS_TOKEN", None)
    return env


@pytest.fixture(autouse=True)
def _real_keyring() -> None:
    if not REAL_KEYRING:
        pytest.skip("needs the session keyring: run via ./run test (TENANT_EVENTS_REAL_KEYRING=1)")


def _login(sim, data: str, name: str) -> None:
    login = cli_login(sim.auth_url, sim.demo_client_id, data, "--name", name, env=_env())
    assert login.returncode == 0, login.err


def _stream_a_while(data: str, name: str, lines: int) -> tuple[int, str]:
    """`stream --tenant NAME` until it printed `lines` events, then SIGTERM; (exit code, stderr)."""
    proc = cli(
        "stream", "--tenant", name, "--data-dir", data, "--from-timestamp", OLD, "--jsonl", "-", env=_env()
    )
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None
        for _ in range(lines):
            if not proc.stdout.readline():
                break
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def _kill(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def _refused_at_tenant(sim, token: str) -> bool:
    """The tenant no longer takes `token` (revoked): 403 invalid_grant."""
    answer = httpx.post(
        sim.auth_url + "/oauth/token",
        data={"grant_type": "refresh_token", "client_id": sim.demo_client_id, "refresh_token": token},
    )
    return answer.status_code == 403 and answer.json()["error"] == "invalid_grant"


def _rows(database: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(database) as db:
        return list(db.execute("SELECT event_id, tenant FROM events ORDER BY seq"))


def test_a_profile_keeps_its_tenant_its_sign_in_and_its_database(make_simulator, tmp_path):
    tenant_a = make_simulator(backlog=4, heartbeat=0.2)
    tenant_b = make_simulator(backlog=4, heartbeat=0.2, seed=9)
    data = str(tmp_path / "data")
    settings_file = tmp_path / "data" / "settings.json"
    _login(tenant_a, data, "work")
    try:
        code, err = _stream_a_while(data, "work", 4)
        assert code == 0, err
        token_a = stored_token(data, "work")  # as the stream left it (rotated)
        assert token_a
        database = tmp_path / "data" / "tenants" / "work.sqlite3"
        before = _rows(database)
        assert len(before) >= 4
        saved = settings_file.read_text()

        # `login --name work --auth-url B` on tenant A's profile: refused before anything is saved or sent.
        login = cli(
            "login",
            "--name",
            "work",
            "--auth-url",
            tenant_b.auth_url,
            "--client-id",
            tenant_b.demo_client_id,
            "--no-browser",
            "--timeout",
            "5",
            "--data-dir",
            data,
            env=_env(),
        )
        out, err = login.communicate(timeout=60)
        assert login.returncode == 3, err
        assert out == ""  # no authorization URL: the sign-in never started
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "profile 'work' follows " + tenant_a.auth_url in lines[0]
        assert "give the new one another name" in lines[0]
        assert settings_file.read_text() == saved
        assert stored_token(data, "work") == token_a

        # The profile moved to B behind the app's back (settings edited by hand): A's token is not sent to B.
        document = json.loads(saved)
        profile = document["tenants"][0]
        profile.update(
            domain=tenant_b.auth_url.split("//")[1],
            auth_url=tenant_b.auth_url,
            base_url=tenant_b.base_url,
            audience=tenant_b.audience,
        )
        settings_file.write_text(json.dumps(document))
        proc = cli("stream", "--tenant", "work", "--data-dir", data, env=_env())
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 3, err
        refused = f"holds the events of {tenant_a.base_url}, not of {tenant_b.base_url}"
        assert refused in err and len(err.strip().splitlines()) == 1, err
        # Nor can it be signed in to B under that name while A's database is there.
        login = cli(
            "login", "--tenant", "work", "--no-browser", "--timeout", "5", "--data-dir", data, env=_env()
        )
        out, err = login.communicate(timeout=60)
        assert login.returncode == 3 and out == "", err
        assert refused in err, err
        assert _rows(database) == before
        assert tenant_b.stats()["refresh"] == {"rotated": 0, "unknown": 0, "reused": 0, "refused": 0}
        assert tenant_a.stats()["refresh"]["reused"] == 0
        # Moved away, the name starts a new database for B.
        database.rename(tmp_path / "a-events.sqlite3")
        _login(tenant_b, data, "work")
        code, err = _stream_a_while(data, "work", 4)
        assert code == 0, err
        ids = {event_id for event_id, _ in _rows(database)}
        assert len(ids) >= 4 and not ids & {event_id for event_id, _ in before}
    finally:
        forget_token(data, "work")


REFRESHER = """
import asyncio, os, sys, time
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.tenant.sign_in import open_secret_store
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sources import of_profile

data, name, rounds, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

async def main():
    paths = AppPaths.resolve(data)
    profile = load_settings(paths).tenant(name)
    async with TenantLink(name, paths, of_profile(profile, open_secret_store().store)) as link:
        await link.restore()  # both processes hold the same stored token now
        print("ready", flush=True)
        deadline = time.monotonic() + 180  # (the test's own bound for the other process, stretched)
        while not os.path.exists(go) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        for _ in range(rounds):
            await link.sign_in_state.session.refresh()
    print("refreshed", flush=True)

asyncio.run(main())
"""


def test_two_processes_on_one_profile_do_not_revoke_each_other(simulator, tmp_path):
    """With rotation, the second refresh of a token read at start would be reuse: the tenant revokes the
    family and both processes are signed out. They take turns and read the stored token again instead."""
    data = str(tmp_path / "data")
    _login(simulator, data, "shared")
    go = tmp_path / "go"
    rounds = 8
    command = [sys.executable, "-c", REFRESHER, data, "shared", str(rounds), str(go)]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    procs = [subprocess.Popen(command, text=True, env=_env(), **pipes) for _ in range(2)]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate(timeout=60)[1]
        go.write_text("")  # both start refreshing at once
        results = [proc.communicate(timeout=120) for proc in procs]
        for proc, (out, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err[-2000:]
            assert out.strip() == "refreshed", err[-2000:]
        outcomes = simulator.stats()["refresh"]
        assert outcomes == {"rotated": 2 * rounds, "unknown": 0, "reused": 0, "refused": 0}
        assert stored_token(data, "shared"), "still signed in"
        again = subprocess.run(
            [sys.executable, "-c", REFRESHER, data, "shared", "1", str(go)],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=120,
        )
        assert again.returncode == 0, again.stderr[-2000:]  # the stored sign-in still works
    finally:
        _kill(procs)
        forget_token(data, "shared")


def test_logout_revokes_and_clears_every_piece_of_the_slot(simulator, tmp_path):
    data = str(tmp_path / "data")
    name = "leaving"
    store = open_secret_store().store
    store.set(name, "L" * 2500)  # an older version's slot (the name alone), in three pieces
    _login(simulator, data, name)
    token = stored_token(data, name)
    assert token
    logout = cli("logout", "--tenant", name, "--data-dir", data, env=_env())
    out, err = logout.communicate(timeout=60)
    assert logout.returncode == 0, err
    assert f"Signed out of {name}" in out
    assert stored_token(data, name) is None and store.get(name) is None
    pieces = [i for i in range(4) if keyring.get_password("tenant-events", f"refresh-token:{name}#{i}")]
    assert pieces == []
    assert _refused_at_tenant(simulator, token)


def test_two_streams_on_one_profile_keep_refreshing_without_signing_each_other_out(make_simulator, tmp_path):
    """The audit's case: `stream` twice on one profile, access tokens living ~1 s, the stream rotated every
    second, so every reconnect refreshes the rotating token in one process or the other."""
    sim = make_simulator(token_ttl=31, rotate_after=1.0, heartbeat=0.2, backlog=3)
    data = str(tmp_path / "data")
    _login(sim, data, "twice")
    procs = [cli("stream", "--tenant", "twice", "--data-dir", data, env=_env()) for _ in range(2)]
    try:
        deadline = time.monotonic() + bound(90)
        while sim.stats()["refresh"]["rotated"] < 10 and time.monotonic() < deadline:
            ended = [p for p in procs if p.poll() is not None]
            if ended:
                errs = [p.communicate(timeout=30)[1][-3000:] for p in ended]
                pytest.fail(f"a stream ended early (exit {ended[0].returncode}): {errs}")
            time.sleep(0.1)
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        results = [proc.communicate(timeout=60) for proc in procs]
        outcomes = sim.stats()["refresh"]
        assert outcomes["rotated"] >= 10 and outcomes["reused"] == 0, outcomes
        for proc, (_, err) in zip(procs, results, strict=True):
            assert proc.returncode == 0, err
            assert "signed out" not in err, err
        assert stored_token(data, "twice"), "still signed in"
    finally:
        _kill(procs)
        forget_token(data, "twice")


def test_a_new_client_id_on_the_same_tenant_retires_the_old_sign_in(simulator, tmp_path):
    """Same tenant, another client: allowed; once the new sign-in works the old one is revoked and cleared."""
    data = str(tmp_path / "data")
    _login(simulator, data, "moving")
    old_key = slot_key(data, "moving")
    old_token = stored_token(data, "moving")
    assert old_token
    ports = [arg for port in EXACT_PORTS for arg in ("--port", str(port))]  # the first free one is used
    login = cli_login(simulator.auth_url, EXACT_CLIENT_ID, data, "--name", "moving", *ports, env=_env())
    try:
        assert login.returncode == 0, login.err
        assert slot_key(data, "moving") != old_key
        assert stored_token(data, "moving"), "the new sign-in is stored"
        assert open_secret_store().store.get(old_key) is None
        assert _refused_at_tenant(simulator, old_token)
    finally:
        forget_token(data, "moving")
