"""TLS to the hub is never optional: a tls:// server (or one anywhere but this computer) that does not start TLS
gets no credential, whatever it answers. Proven against a real impostor (a TCP server on 127.0.0.1 speaking just
enough NATS: an INFO without `tls_required`, PONG to PING) that records every byte a client sends, for
`stream --hub`, `relay` and the app's hub check; and against a real nats-server with TLS, that the same client
connects there with the certificate verified."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from helpers.nats_impostor import Impostor
from tenant_events.hub.connection import HubAuth, HubInsecure, HubOptions, connect
from tenant_events.hub.credentials import check_hub

pytestmark = pytest.mark.hub
PASSWORD = "impostor-must-not-see-this-" + os.urandom(6).hex()


def run_cli(args: list[str], env: dict[str, str], timeout: float = 60) -> tuple[int | None, str]:
    """The command's exit code and stderr; None when it did not end (killed after `timeout`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tenant_events", *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        return None, err
    return proc.returncode, err


def assert_nothing_leaked(fake: Impostor) -> None:
    assert fake.connections >= 1, "the client never reached the impostor"
    assert b"CONNECT" not in fake.received, bytes(fake.received[:300])
    assert PASSWORD.encode() not in fake.received
    assert fake.received == b"", f"a client sent {bytes(fake.received[:120])!r} before TLS"


def test_stream_hub_tls_sends_nothing_to_a_server_without_tls(impostor, tmp_path):
    code, err = run_cli(
        [
            "stream",
            "--hub",
            f"tls://127.0.0.1:{impostor.port}",
            "--hub-tenant",
            "acme",
            "--data-dir",
            str(tmp_path),
            "--hub-user",
            "viewer",
        ],
        {"TENANT_EVENTS_HUB_PASSWORD": PASSWORD},
    )
    assert_nothing_leaked(impostor)
    assert code == 6, err
    errors = [line for line in err.splitlines() if line.startswith("tenant-events: error — ")]
    assert len(errors) == 1, err  # one line, and no retry loop
    assert f"tls://127.0.0.1:{impostor.port} offers no TLS, so nothing was sent to it" in errors[0], err
    assert PASSWORD not in err


def test_relay_sends_no_collector_password_to_a_server_without_tls(impostor, simulator, tmp_path):
    code, err = run_cli(
        [
            "relay",
            "--base-url",
            simulator.base_url,
            "--data-dir",
            str(tmp_path),
            "--hub",
            f"tls://127.0.0.1:{impostor.port}",
            "--hub-tenant",
            "acme",
            "--hub-user",
            "collector",
        ],
        {"TENANT_EVENTS_ACCESS_TOKEN": simulator.mint_token(), "TENANT_EVENTS_HUB_PASSWORD": PASSWORD},
    )
    assert_nothing_leaked(impostor)
    assert code == 6, err
    assert "offers no TLS, so nothing was sent to it" in err.strip().splitlines()[-1], err
    assert simulator.stats()["connections_total"] == 0  # never opened the tenant's stream either


@pytest.mark.parametrize("kind", ["password", "token", "nkey"])
def test_the_app_check_sends_no_credential_to_a_server_without_tls(impostor, kind):
    import nkeys

    secret = PASSWORD
    if kind == "nkey":
        secret = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
    options = HubOptions((f"tls://127.0.0.1:{impostor.port}",), HubAuth(kind, "viewer", secret))

    async def go() -> None:
        with pytest.raises(HubInsecure, match="offers no TLS, so nothing was sent"):
            await check_hub(options, "acme")

    asyncio.run(go())
    assert_nothing_leaked(impostor)
    assert secret.encode() not in impostor.received


def test_a_loopback_nats_url_may_stay_plain_but_a_discovered_remote_one_may_not():
    """nats:// is for this computer only; the rule is checked per server, so one a hub advertises elsewhere
    (INFO `connect_urls`) would be refused too (needs_tls is what the client applies to each)."""
    from tenant_events.hub.connection import needs_tls

    assert not needs_tls("nats", "127.0.0.1") and not needs_tls("nats", "localhost")
    assert needs_tls("nats", "hub.example.com") and needs_tls("nats", "10.0.0.5") and needs_tls("tls", "::1")


@pytest.mark.expect_warning_logs  # asyncio: nats-py's TLS transport returns True from eof_received
def test_a_real_tls_hub_is_verified_and_then_takes_the_credentials(tls_hub):
    node, creds, ca = tls_hub

    async def go() -> None:
        options = HubOptions(
            (f"tls://127.0.0.1:{node.client_port}",), HubAuth("password", "viewer", creds.viewer), str(ca)
        )
        nc = await connect(options, reconnect=False)
        assert nc.connected_url is not None and nc.connected_url.scheme == "tls"
        assert nc._transport is not None and nc._transport._io_writer.get_extra_info("ssl_object") is not None
        await nc.close()

    asyncio.run(go())


@pytest.mark.expect_warning_logs  # asyncio: nats-py's TLS transport returns True from eof_received
def test_a_hub_certificate_not_trusted_ends_the_viewer_with_one_line_not_signed_out(tls_hub, tmp_path):
    node, creds, _ = tls_hub  # without --hub-ca: the system's CAs do not know the test CA
    code, err = run_cli(
        [
            "stream",
            "--hub",
            f"tls://127.0.0.1:{node.client_port}",
            "--hub-tenant",
            "acme",
            "--data-dir",
            str(tmp_path),
            "--hub-user",
            "viewer",
        ],
        {"TENANT_EVENTS_HUB_PASSWORD": creds.viewer},
    )
    errors = [line for line in err.splitlines() if line.startswith("tenant-events: error — ")]
    assert code == 6 and len(errors) == 1, err
    assert "the hub's TLS certificate is not trusted" in errors[0] and "--hub-ca" in errors[0], err
    assert "signed out" not in err
