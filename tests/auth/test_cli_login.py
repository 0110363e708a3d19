"""`tenant-events login` / `logout` as a user runs them: a subprocess with a temp data dir, the test acting as
the browser on the URL printed as the first stdout line. The keyring is the session's (real gnome-keyring
under ./run test; none under plain pytest, which exercises the session-only notice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import httpx
import pytest

from helpers.sign_ins import stored_token

REAL_KEYRING = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tenant_events", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TENANT_EVENTS_LOG_JSON": "1", **(env or {})},
    )


def login_as_browser(proc: subprocess.Popen[str], browse) -> tuple[str, str, str]:
    """Read the first stdout line (the URL alone), play the browser, return (url, rest of stdout, stderr)."""
    assert proc.stdout is not None and proc.stderr is not None
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        url = proc.stdout.readline().rstrip("\n")
        assert url.startswith("http://127.0.0.1:") and " " not in url, url
        page = browse(url)
        out, err = proc.communicate(timeout=60)
    finally:
        timer.cancel()
    return url, out, err, page


def files_text(root) -> str:
    chunks = []
    for path in root.rglob("*"):
        if path.is_file():
            chunks.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(chunks)


@pytest.mark.node
def test_cli_login_then_logout_against_the_node_peer(oidc_peer, tmp_path):
    data = tmp_path / "data"
    proc = cli(
        "login",
        "--no-browser",
        "--auth-url",
        oidc_peer.auth_url,
        "--client-id",
        oidc_peer.client_id,
        "--name",
        "peer",
        "--prompt",
        "consent",
        "--data-dir",
        str(data),
    )
    url, out, err, page = login_as_browser(proc, oidc_peer.act_as_browser)
    assert proc.returncode == 0, err
    assert page.status_code == 200 and "Signed in" in page.text
    params = httpx.URL(url).params
    assert params["code_challenge_method"] == "S256" and params["audience"] == oidc_peer.audience
    assert params["scope"] == "openid profile email offline_access read:events"
    assert out.strip().splitlines()[-1] == "Signed in to peer as Peer alice <alice@example.test>"

    settings = json.loads((data / "settings.json").read_text())
    assert settings["tenants"][0]["name"] == "peer"
    assert settings["tenants"][0]["auth_url"] == oidc_peer.auth_url
    assert (data / "settings.json").stat().st_mode & 0o777 == 0o600

    stored = stored_token(data, "peer") if REAL_KEYRING else None
    if REAL_KEYRING:
        assert stored, "the refresh token is in the system keyring"
        assert stored not in files_text(data) and stored not in err and stored not in out
    else:
        assert "Sign-in will last only while the app runs" in err
    assert "eyJ" not in files_text(data) + out + err, "no JWT anywhere in files, stdout or logs"
    assert "refresh_token" not in files_text(data)

    logout = cli("logout", "--data-dir", str(data))
    out, err = logout.communicate(timeout=60)
    assert logout.returncode == 0, err
    assert "Signed out of peer; events and cursor are kept." in out
    if REAL_KEYRING:
        assert stored_token(data, "peer") is None
        # revoked at the tenant too: the old refresh token no longer works
        answer = httpx.post(
            oidc_peer.auth_url + "/oauth/token",
            data={"grant_type": "refresh_token", "client_id": oidc_peer.client_id, "refresh_token": stored},
        )
        assert answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


@pytest.mark.node
def test_cli_login_cancelled_in_the_browser_exits_4(oidc_peer, tmp_path):
    proc = cli(
        "login",
        "--no-browser",
        "--auth-url",
        oidc_peer.auth_url,
        "--client-id",
        oidc_peer.client_id,
        "--data-dir",
        str(tmp_path),
        "--prompt",
        "consent",
    )
    _url, _out, err, page = login_as_browser(proc, lambda u: oidc_peer.act_as_browser(u, "deny"))
    assert proc.returncode == 4
    assert "sign-in failed: the sign-in was cancelled or refused in the browser" in err
    assert "Sign-in failed" in page.text


def test_cli_login_refuses_bad_profile_values_naming_the_field(tmp_path):
    for args, text in [
        (
            ["--auth-url", "http://tenant.example", "--client-id", "abc"],
            "profile auth_url: 'http://tenant.example' uses http://",
        ),
        (
            ["--auth-url", "https://tenant.example", "--client-id", "bad id"],
            "profile client_id: 'bad id' is not a client ID",
        ),
        (["--auth-url", "https://tenant.example"], "--client-id: is required with --auth-url"),
    ]:
        proc = cli("login", "--no-browser", "--data-dir", str(tmp_path), *args)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 3, err
        assert text in err
        assert out == ""
    assert not (tmp_path / "settings.json").exists()


def test_cli_login_timeout_and_port_in_use(tmp_path):
    """No tenant needed for these: a stub discovery document is served by a real local HTTP server."""
    import socket

    from helpers.auth_stub_tenant import serve_discovery

    with serve_discovery() as auth_url:
        proc = cli(
            "login",
            "--no-browser",
            "--auth-url",
            auth_url,
            "--client-id",
            "abc",
            "--data-dir",
            str(tmp_path),
            "--timeout",
            "1",
        )
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 4, err
        assert out.splitlines()[0].startswith(auth_url + "/authorize?")
        assert "no sign-in response arrived within 1 s" in err

        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        try:
            proc = cli(
                "login",
                "--no-browser",
                "--tenant",
                "127-0-0-1-" + auth_url.rsplit(":", 1)[1],
                "--port",
                str(port),
                "--data-dir",
                str(tmp_path),
            )
            out, err = proc.communicate(timeout=60)
        finally:
            busy.close()
        assert proc.returncode == 4, err
        assert f"the sign-in callback ports {port} on 127.0.0.1 are all in use" in err
        assert out == ""


def test_cli_login_unreachable_tenant_is_a_network_error(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = cli(
        "login",
        "--no-browser",
        "--auth-url",
        f"http://127.0.0.1:{port}",
        "--client-id",
        "abc",
        "--data-dir",
        str(tmp_path),
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 6, err
    assert f"cannot reach the tenant at http://127.0.0.1:{port}" in err
    assert out == ""


def test_a_login_that_fails_before_its_url_fails_the_test_with_its_own_error(tmp_path):
    """The helper playing the browser never takes the login's error line (or nothing) for the sign-in URL: a
    test whose login failed first says why, not that an empty URL has no http:// in it."""
    from helpers.browser import cli_login

    with pytest.raises(AssertionError) as failed:
        cli_login("http://tenant.example", "abc", str(tmp_path / "data"))
    text = str(failed.value)
    assert "`tenant-events login` printed no sign-in URL first (exit code 3)" in text, text
    assert "profile auth_url: 'http://tenant.example' uses http://" in text, text
