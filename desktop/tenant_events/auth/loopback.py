"""The RFC 8252 loopback redirect listener: one asyncio server on 127.0.0.1 per sign-in attempt.

Flow: `bind()` first, then read `redirect_uri` (never probe a free port and bind later: another process may take it);
`wait(state)` serves until a request to `/callback` carries the matching `state`, answering 404 to anything
else (favicon) and 400 to a wrong `state` without giving up; the first matching request is handled once and
ends the wait with its `code` or its mapped `error`. A timeout (5 min) and `cancel()` end it too. `close()`
runs in every path (use `async with`).

         bind()            wait(state)                      close()
  new ─────────▶ bound ─────────────▶ waiting ──┬─ callback ──▶ closed
                                               ├─ timeout ───▶ closed (SignInFailed "timeout")
                                               └─ cancel() ──▶ closed (SignInFailed "cancelled")
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import ipaddress
import logging
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from tenant_events.auth.errors import SignInFailed

log = logging.getLogger(__name__)

LOOPBACK_HOST = "127.0.0.1"  # RFC 8252 §8.3: the IP literal, not "localhost"
CALLBACK_PATH = "/callback"
DEFAULT_TIMEOUT = 300.0
_MAX_REQUEST_BYTES = 16 * 1024
_READ_TIMEOUT = 10.0

# RFC 6749 §4.1.2.1 error codes → what the user reads.
_ERROR_TEXT = {
    "access_denied": "the sign-in was cancelled or refused in the browser",
    "login_required": "the tenant needs you to log in",
    "consent_required": "the tenant needs your consent",
    "interaction_required": "the tenant needs you to interact with the sign-in page",
    "invalid_request": "the tenant rejected the sign-in request as malformed",
    "unauthorized_client": "this client ID may not use this sign-in flow",
    "unsupported_response_type": "the tenant does not support the code flow for this client",
    "invalid_scope": "the tenant rejected the requested scopes",
    "server_error": "the tenant had an internal error",
    "temporarily_unavailable": "the tenant is temporarily unavailable",
}


@dataclass(frozen=True)
class CallbackResult:
    """The authorization response that matched our `state` (RFC 6749 §4.1.2)."""

    code: str
    iss: str | None  # RFC 9207, when the server sends it

    def __repr__(self) -> str:
        return f"CallbackResult(code=<hidden>, iss={self.iss!r})"


def _page(title: str, body: str) -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>"
        f"{html.escape(title)}</title></head><body style='font-family:sans-serif;margin:3em'>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(body)}</p>"
        "<p>You can close this tab and go back to Tenant Events.</p></body></html>"
    ).encode()


def _response(status: int, reason: str, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Cache-Control: no-store\r\n"
        "Referrer-Policy: no-referrer\r\n"  # the URL holds the code: don't leak it to linked pages
        "X-Content-Type-Options: nosniff\r\n"
        "Connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def error_message(error: str, description: str | None) -> str:
    """A sentence for an `error=` redirect; the server's text is quoted, never trusted as markup."""
    text = _ERROR_TEXT.get(error, f"the tenant answered with error {error!r}")
    return f"{text}: {description}" if description else text


class LoopbackListener:
    """Receives one authorization response on http://127.0.0.1:PORT/callback."""

    def __init__(self, ports: Sequence[int] = (0,), *, host: str = LOOPBACK_HOST) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"loopback listener host {host!r} is not a loopback address")
        self._ports = list(ports) or [0]
        self._host = host
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._expected_state: str | None = None
        self._result: asyncio.Future[CallbackResult] | None = None
        self._handled = False
        self.rejected_state = 0  # wrong-state callbacks answered 400 so far
        self.stray_requests = 0  # non-callback requests answered 404 so far

    async def bind(self) -> str:
        """Bind the first free port of the list and return the exact redirect URI to send."""
        busy: list[int] = []
        for port in self._ports:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if (
                sys.platform == "win32"
            ):  # pragma: no cover - Windows lets a second socket share the port otherwise
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)  # type: ignore[attr-defined]
            try:
                sock.bind((self._host, port))
            except OSError:
                sock.close()
                busy.append(port)
                continue
            sock.listen(8)
            sock.setblocking(False)
            self._server = await asyncio.start_server(self._handle, sock=sock)
            self._port = sock.getsockname()[1]
            return self.redirect_uri
        raise SignInFailed(
            "port_in_use",
            f"the sign-in callback ports {', '.join(map(str, busy))} on {self._host} are all in use",
            "close the program using them or add another registered callback port to the tenant profile",
        )

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("bind() first")
        return self._port

    @property
    def redirect_uri(self) -> str:
        return f"http://{self._host}:{self.port}{CALLBACK_PATH}"

    def expect(self, state: str) -> None:
        """Accept the callback for `state` from now on.

        Call it before opening the browser: a fast browser (or an opener that blocks until the page loaded) can
        deliver the callback before `wait()` runs, and it must not be answered "already handled".
        """
        if self._server is None:
            raise RuntimeError("bind() first")
        self._expected_state = state
        if self._result is None:
            self._result = asyncio.get_running_loop().create_future()

    async def wait(self, state: str, seconds: float = DEFAULT_TIMEOUT) -> CallbackResult:
        """Serve until the callback with `state` arrives; raise SignInFailed for its error, timeout or cancel."""
        self.expect(state)
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), seconds)
        except TimeoutError:
            extra = ""
            if self.rejected_state:
                extra = f" ({self.rejected_state} response(s) with a wrong state were rejected)"
            raise SignInFailed(
                "timeout",
                f"no sign-in response arrived within {seconds:g} s{extra}",
                "sign in again and finish in the browser",
            ) from None
        finally:
            await self.close()

    def cancel(self) -> None:
        """End a pending wait with 'cancelled' (the app's Cancel button)."""
        if self._result is not None and not self._result.done():
            self._result.set_exception(SignInFailed("cancelled", "sign-in was cancelled", "sign in again"))

    async def close(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def __aenter__(self) -> LoopbackListener:
        await self.bind()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            peer = writer.get_extra_info("peername")
            if not peer or not ipaddress.ip_address(peer[0]).is_loopback:
                return  # bound to 127.0.0.1 so this cannot happen; refuse anyway
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return
            if len(head) > _MAX_REQUEST_BYTES:
                return
            writer.write(self._answer(head))
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _answer(self, head: bytes) -> bytes:
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return _response(405, "Method Not Allowed", _page("Not supported", "Only GET is accepted here."))
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            self.stray_requests += 1
            return _response(
                404, "Not Found", _page("Not found", "This address only receives sign-in responses.")
            )
        query = {k: v[0] for k, v in parse_qs(target.query, keep_blank_values=True).items()}
        if self._result is None or self._handled or self._result.done():
            return _response(
                409, "Conflict", _page("Already handled", "This sign-in response was already used.")
            )
        if query.get("state") != self._expected_state:
            # RFC 6749 §10.12: a response without our state is not ours (CSRF); keep waiting for the real one.
            self.rejected_state += 1
            log.warning("sign-in callback rejected: its state does not match the request in progress")
            return _response(
                400,
                "Bad Request",
                _page(
                    "Sign-in response rejected",
                    "State mismatch: this response is not for the sign-in in progress.",
                ),
            )
        self._handled = True
        if "error" in query:
            message = error_message(query["error"], query.get("error_description"))
            code = "access_denied" if query["error"] == "access_denied" else query["error"] or "server_error"
            self._result.set_exception(SignInFailed(code, f"sign-in failed: {message}"))
            return _response(200, "OK", _page("Sign-in failed", message[:1].upper() + message[1:] + "."))
        code_value = query.get("code")
        if not code_value:
            self._result.set_exception(
                SignInFailed(
                    "invalid_request", "sign-in failed: the response had neither a code nor an error"
                )
            )
            return _response(
                400, "Bad Request", _page("Sign-in failed", "The response had no authorization code.")
            )
        self._result.set_result(CallbackResult(code=code_value, iss=query.get("iss")))
        return _response(200, "OK", _page("Signed in", "Tenant Events received your sign-in."))
