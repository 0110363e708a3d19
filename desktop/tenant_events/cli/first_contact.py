"""Giving up on a server this run has never reached: the CLI's rule, decided by watching the engine's states.

The engine retries network errors forever, which is right once a stream has been open (laptops sleep, Wi-Fi
drops, the service restarts). Before that, endless retries make a typo in the URL, a closed port or a DNS
failure look like a hang. So `stream` watches the states: when no answer has come from the server within
`timeout` seconds of starting, it stops the monitor and says which host failed and why (exit 6).

    start ──▶ connecting ⇄ reconnecting (network) ──timeout──▶ give up: NetworkError(host, cause)
                 ├─ any answer from the server (connected, 5xx, 429, 403 …) ──▶ reached: retry forever
                 └─ waiting for another process refreshing the sign-in ──▶ not the server's fault: retry forever
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from tenant_events.errors import NetworkError
from tenant_events.values.stream_states import StateChange, StreamState

DEFAULT_TIMEOUT = 20.0
PROBE_TIMEOUT = 5.0

# States and reasons that prove an HTTP answer came back from the server.
_ANSWERED_STATES = (
    StreamState.CATCHING_UP,
    StreamState.LIVE,
    StreamState.RATE_LIMITED,
    StreamState.TOO_MANY_CONNECTIONS,
)
_ANSWERED_REASONS = frozenset(
    {"server_error", "token_refreshed", "cursor_expired", "rotation", "empty_stream", "stream_error"}
)
_NOT_ANSWERED_REASONS = frozenset({"network", "stalled", "internal_error"})
# The server was not asked yet: another process of the data dir holds the sign-in's refresh lock.
_NOT_ASKED_REASONS = frozenset({"sign_in_busy"})


class FirstContact:
    """Observer of one monitor's states (`observe`), plus the timer that gives up (`watch`)."""

    def __init__(self, base_url: str, timeout: float, stop: Callable[[], None]) -> None:
        parts = urlsplit(base_url)
        self.url = base_url
        self.host = parts.hostname or base_url
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.netloc = parts.netloc
        self.timeout = timeout
        self.reached = False
        self.error: NetworkError | None = None
        self._last_failure = ""
        self._stop = stop

    def observe(self, change: StateChange) -> None:
        if self.reached:
            return
        if change.state in _ANSWERED_STATES or change.reason in _ANSWERED_REASONS:
            self.reached = True
        elif change.reason in _NOT_ASKED_REASONS:
            self.reached = True  # no verdict on the server can be made: retry as once reached
        elif change.reason in _NOT_ANSWERED_REASONS:
            self._last_failure = change.message

    async def watch(self) -> None:
        """Sleep `timeout` s; if the server never answered, decide the cause and stop the monitor."""
        if self.timeout <= 0:
            return
        await asyncio.sleep(self.timeout)
        if self.reached:
            return
        cause = await diagnose(self.host, self.port) or _from_engine(self._last_failure)
        self.error = NetworkError(
            f"cannot reach {self.netloc}: {cause}; gave up after {self.timeout:g} s",
            "check the URL and your network (--unreachable-timeout 0 keeps trying)",
        )
        self._stop()


async def diagnose(host: str, port: int) -> str | None:
    """Name resolution, then a TCP connection: the first that fails is the cause; None when both work
    (then the failure is above TCP — TLS, a proxy — and the engine's own message says more)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), PROBE_TIMEOUT)
    except TimeoutError:
        return f"the name {host} did not resolve within {PROBE_TIMEOUT:g} s (DNS)"
    except socket.gaierror as exc:
        return f"the name {host} does not resolve (DNS: {exc.strerror})"
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    try:
        await asyncio.wait_for(loop.sock_connect(sock, address), PROBE_TIMEOUT)
    except TimeoutError:
        return f"no answer on port {port} within {PROBE_TIMEOUT:g} s"
    except ConnectionRefusedError:
        return f"connection refused: nothing is listening on port {port}"
    except OSError as exc:
        return f"cannot connect to port {port}: {exc.strerror or exc}"
    finally:
        sock.close()
    return None


def _from_engine(message: str) -> str:
    """The engine's last failure without its decorations: 'network error: ConnectError: X; reconnecting …'."""
    text = message.split("; reconnecting in", 1)[0]
    text = re.sub(r"^(network error|connection lost|internal error): ", "", text)
    text = re.sub(r"^[A-Z][A-Za-z]*(Error|Timeout): ", "", text)
    if "SSL" in text or "TLS" in text:
        return f"the TLS handshake failed ({text})"
    return text or "no answer"
