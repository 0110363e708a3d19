"""Connecting to the hub: server URLs, TLS trust, and one of password, token, NKey seed or creds file.

`HubOptions` is what the relay, the viewers and the "Connect to a team hub" check share; secrets come from the
keyring (hub/credentials.py) or, for the command line, from environment variables and files — never from
arguments or logs. `describe()` turns what nats-py raises into the one line a person reads.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NATS
from nats.aio.client import RawCredentials

from tenant_events import __version__
from tenant_events.errors import NetworkError, SignInRequired
from tenant_events.http import untrusted_certificate
from tenant_events.hub.profile import HubAuthKind
from tenant_events.server_text import shown

log = logging.getLogger(__name__)

CLIENT_NAME: Final = f"tenant-events/{__version__}"


class HubUnavailable(NetworkError):
    """No server of the hub can be reached (or JetStream there does not answer)."""


class HubRefused(SignInRequired):
    """The hub refused the credentials, or the user lacks a permission the job needs."""


@dataclass(frozen=True)
class HubAuth:
    """How to sign in to the hub; `secret` is the password, token, NKey seed or creds file text."""

    kind: HubAuthKind = "none"
    user: str = ""
    secret: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.kind != "none" and not self.secret:
            raise HubRefused(f"no {self.kind} given for the hub", "add the hub's credentials again")


@dataclass(frozen=True)
class HubOptions:
    """Where the hub is and how to reach it."""

    urls: tuple[str, ...]
    auth: HubAuth = field(default_factory=HubAuth)
    ca_file: str = ""  # PEM of the CA that signed the hub's certificate; empty = the system's trust store
    connect_timeout: float = 3.0

    @property
    def shown(self) -> str:
        return ",".join(self.urls)

    def tls_context(self) -> ssl.SSLContext | None:
        """Verification always on; None for plain nats:// (check_hub_url allows it only for loopback)."""
        if not self.ca_file and not any(u.startswith("tls://") for u in self.urls):
            return None
        return ssl.create_default_context(cafile=self.ca_file or None)


def _auth_kwargs(auth: HubAuth) -> dict[str, Any]:
    if auth.kind == "password":
        return {"user": auth.user, "password": auth.secret}
    if auth.kind == "token":
        return {"token": auth.secret}
    if auth.kind == "nkey":
        return {"nkeys_seed_str": auth.secret.strip()}
    if auth.kind == "creds":
        return {"user_credentials": RawCredentials(auth.secret)}
    return {}


async def connect(
    options: HubOptions,
    *,
    reconnect: bool,
    on_error: Callable[[Exception], None] | None = None,
    on_disconnect: Callable[[], None] | None = None,
    on_reconnect: Callable[[], None] | None = None,
) -> NATS:
    """One connection to the first server that answers. `reconnect`: nats-py rejoins another server by itself
    (the relay: its lease survives a node going away); without it the connection closes on loss and the caller
    decides (a viewer: backoff, then a new consumer from its stored position)."""

    async def error_cb(exc: Exception) -> None:
        log.debug("hub %s: %s", options.shown, describe(exc))
        if on_error is not None:
            on_error(exc)

    def hook(callback: Callable[[], None] | None) -> Callable[[], Awaitable[None]] | None:
        if callback is None:
            return None

        async def call() -> None:
            callback()

        return call

    nc = NATS()
    # seconds between rejoin attempts; nats-py annotates it `int` but sleeps on it (a float is fine)
    waits: dict[str, Any] = {"reconnect_time_wait": 0.5 if reconnect else 0.1}
    try:
        await nc.connect(
            servers=list(options.urls),
            name=CLIENT_NAME,
            connect_timeout=max(1, round(options.connect_timeout)),
            allow_reconnect=reconnect,
            max_reconnect_attempts=-1 if reconnect else 1,
            ping_interval=5,
            max_outstanding_pings=3,
            tls=options.tls_context(),
            error_cb=error_cb,
            disconnected_cb=hook(on_disconnect),
            reconnected_cb=hook(on_reconnect),
            **waits,
            **_auth_kwargs(options.auth),
        )
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        _abandon(nc)
        raise translate(exc, options) from exc
    return nc


def _abandon(nc: NATS) -> None:
    """Close the socket a failed connect left open: nats-py leaves a refused sign-in's socket to the garbage
    collector (an unclosed-socket ResourceWarning, a file descriptor held until then). Not `nc.close()`: it
    waits for a TLS socket whose handshake failed to finish closing, which it never does."""
    transport = getattr(nc, "_transport", None)  # private, but the client keeps no other handle on it
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


def translate(exc: BaseException, options: HubOptions) -> HubRefused | HubUnavailable:
    """A connection failure as the user-fixable error it is."""
    text = describe(exc)
    if is_refusal(exc):
        return HubRefused(f"the hub {options.shown} refused the sign-in ({text})",
                          "check the hub user and its password, token, NKey or creds file")  # fmt: skip
    if untrusted_certificate(exc) is not None:
        return HubRefused(f"the hub's TLS certificate is not trusted ({text})",
                          "give the CA file that signed it (--hub-ca), or check the host name")  # fmt: skip
    return HubUnavailable(
        f"cannot reach the hub {options.shown} ({text})", "check that it runs and the network"
    )


def is_refusal(exc: BaseException) -> bool:
    """Credentials or permissions: retrying cannot fix them."""
    text = str(exc).lower()
    return isinstance(exc, nats.errors.AuthorizationError | nats.errors.InvalidUserCredentialsError) or (
        "authorization violation" in text or "permissions violation" in text or "authentication" in text
    )


def describe(exc: BaseException) -> str:
    """One line for a nats-py or socket error, without the library's class-name noise."""
    reason = untrusted_certificate(exc)
    if reason is not None:
        return f"certificate not trusted: {reason}"
    if isinstance(exc, nats.errors.AuthorizationError) or "authorization violation" in str(exc).lower():
        return "authorization violation"
    if "permissions violation" in str(exc).lower():
        # The server's words (server_text.py).
        return shown(str(exc).strip().removeprefix("nats: ").strip("'"))
    if isinstance(exc, nats.errors.NoServersError):
        cause = exc.__cause__ or exc.__context__
        return describe(cause) if cause is not None else "no server answered"
    if isinstance(exc, nats.js.errors.APIError):
        return shown(f"JetStream: {exc.description or 'error'} (code {exc.code}, {exc.err_code})")
    if isinstance(exc, nats.errors.NoRespondersError | nats.js.errors.ServiceUnavailableError):
        return "JetStream did not answer (no responders)"
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    text = str(exc).strip().removeprefix("nats: ").strip()
    return shown(f"{type(exc).__name__}: {text}") if text else type(exc).__name__
