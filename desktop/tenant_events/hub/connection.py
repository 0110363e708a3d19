"""Connecting to the hub: server URLs, TLS trust, and one of password, token, NKey seed or creds file.

`HubOptions` is what the relay, the viewers and the "Connect to a team hub" check share; secrets come from the
keyring (hub/credentials.py) or, for the command line, from environment variables and files — never from
arguments or logs. `describe()` turns what nats-py raises into the one line a person reads.

TLS. nats-py starts TLS only when the server's first line (INFO) says `tls_required`, so a server — or anyone
in the middle — that leaves it out would get the credentials in clear text. `_Client` refuses such a server
before a byte is sent: a tls:// URL, and any server not on this computer, must require TLS, and the handshake
is verified against the system's CAs or the given CA file. Each client also reads replies on an inbox prefix of
its own (`inbox_prefix`), so a hub configured as packaging/nats/accounts.conf shows no client another's inbox.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import re
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import nats
import nats.errors
import nats.js.errors
import nkeys
from nats.aio.client import Client as NATS
from nats.aio.client import RawCredentials

from tenant_events import __version__
from tenant_events.errors import ConfigError, NetworkError, SignInRequired
from tenant_events.http import is_loopback_host, untrusted_certificate
from tenant_events.server_text import shown
from tenant_events.settings.hubs import HubAuthKind

log = logging.getLogger(__name__)

CLIENT_NAME: Final = f"tenant-events/{__version__}"


class HubUnavailable(NetworkError):
    """No server of the hub can be reached (or JetStream there does not answer)."""


class HubRefused(SignInRequired):
    """The hub refused the credentials, or the user lacks a permission the job needs."""


class HubInsecure(NetworkError):
    """A server that must speak TLS did not offer it: nothing was sent to it, and retrying cannot help."""


class NoTLS(nats.errors.Error):
    """Raised inside nats-py's connect, after the server's INFO and before CONNECT."""

    def __init__(self, server: str) -> None:
        super().__init__(server)
        self.server = server

    def __str__(self) -> str:
        return f"{self.server} offers no TLS"


def needs_tls(scheme: str, host: str | None) -> bool:
    """tls:// always; nats:// only to this computer (a discovered server elsewhere gets no credentials)."""
    return scheme == "tls" or not is_loopback_host(host or "")


class _Client(NATS):
    """nats-py's client, refusing before CONNECT a server that does not start TLS when it must.

    `_process_info` is nats-py's step between reading INFO and the TLS upgrade and CONNECT (on every connect
    and reconnect); tests/hub/test_hub_tls.py proves against a real impostor that nothing is sent after it."""

    async def _process_info(self, info: dict[str, Any], initial_connection: bool = False) -> None:
        server = self._current_server
        if initial_connection and server is not None:
            uri = server.uri
            if needs_tls(uri.scheme, uri.hostname) and info.get("tls_required") is not True:
                raise NoTLS(f"{uri.scheme}://{uri.netloc}")
        await super()._process_info(info, initial_connection)


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

    def tls_context(self) -> ssl.SSLContext:
        """Verification always on (a loopback nats:// server that asks for TLS is verified too); ConfigError
        naming the CA file when it cannot be used."""
        try:
            return ca_context(self.ca_file)
        except ValueError as exc:
            raise ConfigError(
                "hub ca_file", str(exc), "give the PEM file of the CA that signed the hub's certificate"
            ) from None


def ca_context(ca_file: str) -> ssl.SSLContext:
    """A verifying TLS context trusting `ca_file` (PEM), or the system's CAs; ValueError saying why not."""
    if not ca_file:
        return ssl.create_default_context()
    try:
        return ssl.create_default_context(cafile=ca_file)
    except FileNotFoundError:
        raise ValueError(f"{ca_file} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{ca_file} is a directory, not a PEM file") from None
    except PermissionError:
        raise ValueError(f"{ca_file} cannot be read (permission denied)") from None
    except (ssl.SSLError, UnicodeDecodeError, ValueError):
        raise ValueError(f"{ca_file} holds no PEM certificate") from None
    except OSError as exc:
        raise ValueError(f"{ca_file} cannot be read ({exc.strerror or type(exc).__name__})") from None


_TOKEN_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def seed_public_key(seed: str) -> str:
    """The public key (U…) of an NKey user seed; ValueError when the seed is damaged (the nkeys package does
    not check a seed's checksum: a changed character would only show as a refused sign-in)."""
    text = seed.strip()
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
        if len(raw) != 36 or nkeys.crc16(raw[:-2]) != int.from_bytes(raw[-2:], "little"):
            raise ValueError
        pair = nkeys.from_seed(text.encode())
        public = str(pair.public_key.decode())
    except (nkeys.NkeysError, ValueError, TypeError, IndexError, binascii.Error):
        raise ValueError("is not a valid NKey user seed (its checksum or length is wrong)") from None
    if not public.startswith("U"):
        raise ValueError("is an NKey seed, but not a user's (it must start with SU)")
    return public


def creds_seed(creds: str) -> str:
    """The NKey seed inside a creds file's text ('' when there is none)."""
    lines = [line.strip() for line in creds.splitlines()]
    for at, line in enumerate(lines):
        if "BEGIN USER NKEY SEED" in line:
            return next((x for x in lines[at + 1 :] if x), "")
    return ""


def inbox_prefix(auth: HubAuth) -> str:
    """The inbox this client reads replies on: `_INBOX_<user>` (a password user; characters other than letters,
    digits, `-` and `_` become `_`), `_INBOX_<public key>` (an NKey or creds user), `_INBOX` otherwise (a
    token or no sign-in: the hub has one user, no one to keep apart). packaging/nats/accounts.conf lets each
    user subscribe only to its own."""
    if auth.kind == "password":
        return "_INBOX_" + _TOKEN_SAFE.sub("_", auth.user)
    with contextlib.suppress(ValueError):
        if auth.kind == "nkey":
            return "_INBOX_" + seed_public_key(auth.secret)
        if auth.kind == "creds":
            return "_INBOX_" + seed_public_key(creds_seed(auth.secret))
    return "_INBOX"


def _auth_kwargs(auth: HubAuth) -> dict[str, Any]:
    """nats-py's sign-in arguments; ConfigError for a damaged NKey seed (nats-py would fail on every connect)."""
    try:
        if auth.kind == "nkey":
            seed_public_key(auth.secret)
        elif auth.kind == "creds":
            seed_public_key(creds_seed(auth.secret))
    except ValueError as exc:
        raise ConfigError(
            f"hub {auth.kind}", str(exc), "use the file the hub's administrator gave you"
        ) from None
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

    nc = _Client()
    # seconds between rejoin attempts; nats-py annotates it `int` but sleeps on it (a float is fine)
    waits: dict[str, Any] = {"reconnect_time_wait": 0.5 if reconnect else 0.1}
    tls, sign_in = options.tls_context(), _auth_kwargs(options.auth)  # ConfigError before any connection
    try:
        await nc.connect(
            servers=list(options.urls),
            name=CLIENT_NAME,
            connect_timeout=max(1, round(options.connect_timeout)),
            allow_reconnect=reconnect,
            max_reconnect_attempts=-1 if reconnect else 1,
            ping_interval=5,
            max_outstanding_pings=3,
            tls=tls,
            inbox_prefix=inbox_prefix(options.auth),
            error_cb=error_cb,
            disconnected_cb=hook(on_disconnect),
            reconnected_cb=hook(on_reconnect),
            **waits,
            **sign_in,
        )
    except (TimeoutError, OSError, nats.errors.Error) as exc:
        _abandon(nc)
        raise translate(exc, options) from exc
    except BaseException:  # cancelled (a tenant removed while it connects): its socket goes with it
        _abandon(nc)
        raise
    return nc


CLOSE_WITHIN_S: Final = 5.0


async def close_connection(nc: NATS) -> None:
    """`nc.close()`, bounded: nats-py waits for its socket to finish closing, which a socket lost while it
    reconnects (a hub node going down) may never do — a command that had stopped, its summary printed, hung at
    exit. After CLOSE_WITHIN_S the socket is closed under it."""
    try:
        await asyncio.wait_for(nc.close(), CLOSE_WITHIN_S)
    except TimeoutError:
        log.info("the hub connection did not close within %.0f s; its socket was closed", CLOSE_WITHIN_S)
        _abandon(nc)


def _abandon(nc: NATS) -> None:
    """Close the socket a failed connect left open: nats-py leaves a refused sign-in's socket to the garbage
    collector (an unclosed-socket ResourceWarning, a file descriptor held until then). Not `nc.close()`: it
    waits for a TLS socket whose handshake failed to finish closing, which it never does."""
    transport = getattr(nc, "_transport", None)  # private, but the client keeps no other handle on it
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()
    for name in ("_reading_task", "_ping_interval_task", "_flusher_task"):  # a connect cancelled at its end
        task = getattr(nc, name, None)
        if isinstance(task, asyncio.Task) and not task.done():
            task.cancel()


def translate(exc: BaseException, options: HubOptions) -> HubRefused | HubUnavailable | HubInsecure:
    """A connection failure as the user-fixable error it is."""
    text = describe(exc)
    plain = no_tls(exc)
    if plain is not None:
        return HubInsecure(
            f"the hub {plain.server} offers no TLS, so nothing was sent to it (the credentials "
            "would have crossed the network in clear text)",
            "check that the URL is the hub's "
            "and that its tls block is set; if it is, someone may be intercepting the connection",
        )
    if is_refusal(exc):
        return HubRefused(
            f"the hub {options.shown} refused the sign-in ({text})",
            "check the hub user and its password, token, NKey or creds file",
        )
    if untrusted_certificate(exc) is not None:  # nothing was sent either: the handshake comes first
        return HubInsecure(
            f"the hub's TLS certificate is not trusted ({text})",
            "give the CA file that signed it (--hub-ca), or check the host name",
        )
    return HubUnavailable(
        f"cannot reach the hub {options.shown} ({text})", "check that it runs and the network"
    )


def is_refusal(exc: BaseException) -> bool:
    """Credentials or permissions: retrying cannot fix them."""
    text = str(exc).lower()
    return isinstance(exc, nats.errors.AuthorizationError | nats.errors.InvalidUserCredentialsError) or (
        "authorization violation" in text or "permissions violation" in text or "authentication" in text
    )


def no_tls(exc: BaseException | None) -> NoTLS | None:
    """The NoTLS refusal behind `exc` (nats-py may wrap it), if any."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, NoTLS):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def describe(exc: BaseException) -> str:
    """One line for a nats-py or socket error, without the library's class-name noise."""
    plain = no_tls(exc)
    if plain is not None:
        return f"{plain}: refused to send the credentials in clear text"
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
