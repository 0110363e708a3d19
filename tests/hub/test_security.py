"""Hub security with real nats-server processes: the documented permissions (packaging/nats/accounts.conf) let a
viewer read and nothing else, a collector publish; wrong credentials end in one clear line; TLS is verified
against the given CA; token and NKey sign-in work against servers configured for them."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import subprocess
import sys
import time

import nats
import nats.errors
import nkeys
import pytest

from helpers.nats_hub import NatsNode, free_port
from tenant_events.hub.connection import HubAuth, HubInsecure, HubOptions, HubRefused, connect
from tenant_events.hub.credentials import check_hub, check_secret
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames

pytestmark = pytest.mark.hub


def options(hub, user: str, password: str | None = None, **kw) -> HubOptions:
    secret = password if password is not None else getattr(hub.credentials, user)
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, secret), **kw)


async def _permission_errors(nc_errors: list[Exception]) -> list[str]:
    await asyncio.sleep(0.3)  # the server reports a refused publish asynchronously (-ERR)
    return [str(e).lower() for e in nc_errors if "permissions violation" in str(e).lower()]


def test_a_viewer_can_read_but_not_publish_or_change_anything(nats_single):
    hub, names = nats_single, HubNames("acme")

    async def go() -> None:
        collector = await connect(options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), names, StreamPlan())
        await collector.jetstream().publish(
            names.event_subject("user.created"), b"{}", headers={"Nats-Msg-Id": "e1"}
        )
        errors: list[Exception] = []

        async def record(exc: Exception) -> None:
            errors.append(exc)

        viewer = await nats.connect(
            hub.urls,
            user="viewer",
            password=hub.credentials.viewer,
            error_cb=record,
            inbox_prefix="_INBOX_viewer",  # its own (packaging/nats/accounts.conf)
            allow_reconnect=False,
        )
        js = viewer.jetstream(timeout=1.0)
        info = await js.stream_info(names.stream)  # reading is allowed
        assert info.state.messages == 1
        await viewer.publish(names.event_subject("user.deleted"), b"{}")  # a forged event
        await viewer.publish(f"$KV.{names.cursor_bucket}.cursor", b"{}")  # moving the collector's cursor
        with pytest.raises(nats.errors.TimeoutError):  # refused: no JetStream answer ever comes
            await js.add_stream(name="VIEWER_MADE", subjects=["viewer.>"])
        with pytest.raises(nats.errors.TimeoutError):
            await js.delete_stream(names.stream)
        refused = await _permission_errors(errors)
        assert any("tenant-events.acme.user.deleted" in e for e in refused), errors
        assert any("$kv.tenant_events_acme_cursor.cursor" in e for e in refused), errors
        assert any("stream.create" in e for e in refused) and any("stream.delete" in e for e in refused), (
            errors
        )
        assert (await collector.jetstream().stream_info(names.stream)).state.messages == 1
        await viewer.close()
        await collector.close()

    asyncio.run(go())


def test_a_relay_with_viewer_credentials_is_refused_in_one_line(nats_single, simulator, tmp_path):
    hub = nats_single
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "relay",
            "--base-url",
            simulator.base_url,
            "--data-dir",
            str(tmp_path),
            "--hub",
            hub.urls,
            "--hub-tenant",
            "acme",
            "--hub-user",
            "viewer",
        ],
        env={
            **os.environ,
            "TENANT_EVENTS_ACCESS_TOKEN": simulator.mint_token(),
            "TENANT_EVENTS_HUB_PASSWORD": hub.credentials.viewer,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 4, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tenant-events: the hub user may not create or read the stream TENANT_EVENTS_ACME")
    assert "use a collector's credentials" in last
    assert simulator.stats()["connections_total"] == 0  # never opened the tenant's stream


def test_a_wrong_password_ends_the_viewer_signed_out(nats_single, tmp_path):
    hub = nats_single
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "stream",
            "--hub",
            hub.urls,
            "--hub-tenant",
            "acme",
            "--data-dir",
            str(tmp_path),
            "--hub-user",
            "viewer",
        ],
        env={**os.environ, "TENANT_EVENTS_HUB_PASSWORD": "not-the-password"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 4, proc.stderr
    assert "tenant-events: signed out — the hub nats://127.0.0.1:" in proc.stderr
    assert "refused the sign-in (authorization violation)" in proc.stderr
    assert "not-the-password" not in proc.stderr + "".join(
        p.read_text() for p in (tmp_path / "logs").glob("*")
    )


# -- TLS (the tls_hub fixture is in conftest.py) ------------------------------------------------------------
@pytest.mark.expect_warning_logs  # asyncio: nats-py's TLS transport returns True from eof_received
def test_tls_is_verified_against_the_given_ca(tls_hub):
    node, creds, ca = tls_hub
    url = f"tls://127.0.0.1:{node.client_port}"

    async def go() -> None:
        trusted = HubOptions((url,), HubAuth("password", "collector", creds.collector), str(ca))
        nc = await connect(trusted, reconnect=False)
        assert nc.connected_url is not None and nc.connected_url.scheme == "tls"
        await provision(nc.jetstream(), HubNames("acme"), StreamPlan())
        await nc.close()
        assert (await check_hub(trusted, "acme")).messages == 0
        with pytest.raises(
            HubInsecure, match="certificate is not trusted"
        ):  # the system's CAs do not know it
            await connect(
                HubOptions((url,), HubAuth("password", "collector", creds.collector)), reconnect=False
            )

    asyncio.run(go())


# -- token and NKey servers -------------------------------------------------------------------------------------
def _server(tmp_path, authorization: str, extra: str = "") -> NatsNode:
    port, monitor = free_port(), free_port()
    config = tmp_path / "auth.conf"
    block = f"authorization {{ {authorization} }}\n" if authorization else ""
    config.write_text(
        f'listen: "127.0.0.1:{port}"\nhttp: "127.0.0.1:{monitor}"\n'
        f'jetstream {{ store_dir: "{tmp_path / "store"}" }}\n{block}{extra}'
    )
    node = NatsNode("auth", config, {}, port, monitor, tmp_path)
    node.start()
    node.wait_healthy()
    return node


@pytest.mark.parametrize("kind", ["token", "nkey"])
def test_token_and_nkey_sign_in(tmp_path, kind):
    if kind == "token":
        secret = "tok-" + os.urandom(8).hex()
        node = _server(tmp_path, f'token: "{secret}"')
    else:
        secret = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
        public = nkeys.from_seed(secret.encode()).public_key.decode()
        node = _server(tmp_path, f'users: [{{ nkey: "{public}" }}]')
    try:

        async def go() -> None:
            good = HubOptions((node.url,), HubAuth(kind, secret=secret))
            nc = await connect(good, reconnect=False)
            await provision(nc.jetstream(), HubNames("acme"), StreamPlan())
            await nc.close()
            assert (await check_hub(good, "acme")).stream == "TENANT_EVENTS_ACME"
            wrong = (
                "tok-wrong"
                if kind == "token"
                else nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()
            )
            with pytest.raises(HubRefused, match="refused the sign-in"):
                await connect(HubOptions((node.url,), HubAuth(kind, secret=wrong)), reconnect=False)

        asyncio.run(go())
    finally:
        node.stop()


# -- creds file (operator mode) ---------------------------------------------------------------------------------
def _keypair(prefix: int) -> tuple[nkeys.KeyPair, str, str]:
    seed = nkeys.encode_seed(os.urandom(32), prefix)
    pair = nkeys.from_seed(seed)
    return pair, pair.public_key.decode(), seed.decode()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(issuer: nkeys.KeyPair, issuer_key: str, subject_key: str, nats_claims: dict) -> str:
    """A NATS JWT (v2): claims signed with the issuer's ed25519 NKey."""
    claims = {
        "iat": int(time.time()),
        "iss": issuer_key,
        "sub": subject_key,
        "name": subject_key[:8],
        "nats": {**nats_claims, "version": 2},
    }
    claims["jti"] = (
        base64.b32encode(hashlib.sha256(json.dumps(claims).encode()).digest()).decode().rstrip("=")
    )
    signed = f"{_b64(json.dumps({'typ': 'JWT', 'alg': 'ed25519-nkey'}).encode())}.{_b64(json.dumps(claims).encode())}"
    return f"{signed}.{_b64(issuer.sign(signed.encode()))}"


def _creds(account: nkeys.KeyPair, account_key: str) -> str:
    _, user_key, user_seed = _keypair(nkeys.PREFIX_BYTE_USER)
    token = _jwt(
        account,
        account_key,
        user_key,
        {"type": "user", "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1},
    )
    return (
        f"-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{user_seed}\n------END USER NKEY SEED------\n"
    )


def test_creds_file_sign_in(tmp_path):
    operator, operator_key, _ = _keypair(nkeys.PREFIX_BYTE_OPERATOR)
    team, team_key, _ = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, system_key, _ = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    stranger, stranger_key, _ = _keypair(nkeys.PREFIX_BYTE_ACCOUNT)  # an account this server never heard of
    limits = {
        "subs": -1,
        "data": -1,
        "payload": -1,
        "imports": -1,
        "exports": -1,
        "wildcards": True,
        "conn": -1,
        "leaf": -1,
    }
    jetstream = {**limits, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    accounts = {
        team_key: _jwt(operator, operator_key, team_key, {"type": "account", "limits": jetstream}),
        system_key: _jwt(operator, operator_key, system_key, {"type": "account", "limits": limits}),
    }
    operator_jwt = _jwt(
        operator, operator_key, operator_key, {"type": "operator", "system_account": system_key}
    )
    preload = "\n".join(f' {key}: "{token}"' for key, token in accounts.items())
    node = _server(
        tmp_path,
        "",
        f'operator: "{operator_jwt}"\nsystem_account: {system_key}\nresolver: MEMORY\n'
        f"resolver_preload: {{\n{preload}\n}}\n",
    )
    try:

        async def go() -> None:
            good = HubOptions(
                (node.url,), HubAuth("creds", secret=check_secret("creds", _creds(team, team_key)))
            )
            nc = await connect(good, reconnect=False)
            await provision(nc.jetstream(), HubNames("acme"), StreamPlan())
            await nc.close()
            assert (await check_hub(good, "acme")).stream == "TENANT_EVENTS_ACME"
            foreign = HubOptions((node.url,), HubAuth("creds", secret=_creds(stranger, stranger_key)))
            with pytest.raises(HubRefused, match="refused the sign-in"):
                await connect(foreign, reconnect=False)

        asyncio.run(go())
    finally:
        node.stop()
