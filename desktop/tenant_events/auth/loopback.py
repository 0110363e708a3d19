"""The RFC 8252 loopback redirect listener: one asyncio server on 127.0.0.1 per sign-in attempt.

Flow: `bind()` first, then read `redirect_uri` (never probe a free port and bind later: another process may take it);
`wait(state)` serves until a request to `/callback` carries the matching `state`, answering 404 to anything
else (favicon) and 400 to a wrong `state` without giving up; the first matching request is handled once and
ends the wait with its `code` or its mapped `error`. A timeout (5 min) and `cancel()` end it too. `close()`
runs in every path (use `async with`).

Whatever else connects is cheap and quiet: at most `_MAX_CONNECTIONS` are open at once (a new one closes the
oldest still waiting for its request, so idle connections can neither exhaust the process's file descriptors
nor keep the browser's callback out), one that sends nothing for `_READ_TIMEOUT` is closed without a word, a
malformed request is answered 400 and logged as one short line (the first few), and `close()` ends every
connection still open, so none is left to be cancelled, and logged, when the loop shuts down.

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
from tenant_events.server_text import shown

log = logging.getLogger(__name__)

LOOPBACK_HOST = "127.0.0.1"  # RFC 8252 §8.3: the IP literal, not "localhost"
CALLBACK_PATH = "/callback"
DEFAULT_TIMEOUT = 300.0
_MAX_REQUEST_BYTES = 16 * 1024
_READ_TIMEOUT = 10.0  # seconds a connection may take to send its request head
_MAX_CONNECTIONS = 128  # open at once (a browser opens a few); far below any file-descriptor limit
# Connections the kernel queues for accept(); asyncio accepts this many per turn, so a request that just arrived
# is read before several more turns of newcomers could push it out past the cap.
_BACKLOG = 32
_LOGGED_MALFORMED = 3  # malformed requests logged per listener (one short line each); the rest only counted

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
    """A sentence for an `error=` redirect; the server's text is quoted, never trusted as markup, and escaped and
    cut (server_text.py) since it reaches the terminal and the window."""
    text = _ERROR_TEXT.get(error, f"the tenant answered with error {shown(error, 80)!r}")
    return f"{text}: {shown(description)}" if description else text


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
        self.malformed_requests = 0  # requests that are not HTTP, answered 400 so far
        self.dropped_connections = 0  # idle connections closed to make room for a new one
        self._open: set[asyncio.StreamWriter] = set()
        self._waiting: dict[asyncio.StreamWriter, None] = {}  # no request head yet, oldest first

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
            sock.listen(_BACKLOG)
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
            for writer in list(self._open):  # their handlers end at once, quietly, before the loop may stop
                writer.transport.abort()
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

    def _admit(self, writer: asyncio.StreamWriter) -> None:
        """Count a new connection; past the cap, close the oldest that has not sent its request yet."""
        self._open.add(writer)
        self._waiting[writer] = None
        while len(self._open) > _MAX_CONNECTIONS and self._waiting:
            oldest = next(iter(self._waiting))
            del self._waiting[oldest]
            self._open.discard(oldest)  # its socket closes now, though its handler ends a turn later
            oldest.transport.abort()  # that handler reads EOF and ends quietly
            self.dropped_connections += 1

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._admit(writer)
        try:
            await self._serve(reader, writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        except asyncio.CancelledError:
            # The loop is shutting down around a connection close() did not reach. Python 3.11's stream server
            # logs a handler that ends cancelled as an ERROR with a traceback; this connection has nothing to say.
            writer.transport.abort()
        finally:
            self._open.discard(writer)
            self._waiting.pop(writer, None)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            peer = writer.get_extra_info("peername")
            if not peer or not ipaddress.ip_address(peer[0]).is_loopback:
                return  # bound to 127.0.0.1 so this cannot happen; refuse anyway
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT)
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
                return  # idle, cut off or oversized: closed without a word
            finally:
                self._waiting.pop(writer, None)
            if len(head) > _MAX_REQUEST_BYTES:
                return
            writer.write(self._answer(head))
            await writer.drain()
        except (ConnectionError, OSError):
            pass

    def _malformed(self, request_line: str, why: str) -> bytes:
        """400 for a request that is not HTTP; the first few are logged as one short line, never a traceback."""
        self.malformed_requests += 1
        if self.malformed_requests <= _LOGGED_MALFORMED:
            log.warning(
                "sign-in callback listener: ignored a malformed request (%s): %s",
                why,
                shown(request_line, 80),
            )
        return _response(
            400, "Bad Request", _page("Bad request", "This is not a request this address reads.")
        )

    def _answer(self, head: bytes) -> bytes:
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            return self._malformed(request_line, "not an HTTP/1 request line")
        if parts[0] != "GET":
            return _response(405, "Method Not Allowed", _page("Not supported", "Only GET is accepted here."))
        try:
            target = urlsplit(parts[1])
            query = {k: v[0] for k, v in parse_qs(target.query, keep_blank_values=True).items()}
        except ValueError as exc:  # "Invalid IPv6 URL", too many fields …
            return self._malformed(request_line, str(exc))
        if target.path != CALLBACK_PATH:
            self.stray_requests += 1
            return _response(
                404, "Not Found", _page("Not found", "This address only receives sign-in responses.")
            )
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
            code = (
                "access_denied"
                if query["error"] == "access_denied"
                else shown(query["error"], 80) or "server_error"
            )
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
