"""Alert receivers written to hurt the sender, each a raw TCP server on 127.0.0.1 in a thread of its own:

Trickler   reads the request, then answers a byte at a time (one every `every` s) and never finishes: no
           read ever waits long enough to time out
Flood      answers 200 with a body of `size` bytes and counts how many of them the sender took
SmtpTrickler  an SMTP server whose greeting never ends: a continuation line ("220-…") every `every` s, each
           read answered well within any read timeout
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, TypeVar

S = TypeVar("S", bound=Any)


class _Server:
    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])
        self.requests = 0
        self.first_request_at: float | None = None  # time.monotonic() when the first request had arrived
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            _read_request(conn)
            with self._lock:
                self.requests += 1
                if self.first_request_at is None:
                    self.first_request_at = time.monotonic()
            self.answer(conn)

    def answer(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._sock.close()
        with self._lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)


def _read_request(conn: socket.socket) -> bytes:
    """The request's head and its Content-Length body."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


class Trickler(_Server):
    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        super().__init__()

    def answer(self, conn: socket.socket) -> None:
        for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10_000_000:
            if self._closed.is_set():
                return
            conn.sendall(bytes([byte]))
            time.sleep(self.every)


class Flood(_Server):
    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0  # bytes of the body the sender accepted before it closed the connection
        super().__init__()

    def answer(self, conn: socket.socket) -> None:
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Length: {self.size}\r\n\r\n".encode())
        chunk = b"0" * 65536
        while self.taken < self.size:
            conn.sendall(chunk)
            self.taken += len(chunk)


class SmtpTrickler(_Server):
    def __init__(self, every: float = 0.3) -> None:
        self.every = every
        super().__init__()

    def _serve(self, conn: socket.socket) -> None:
        """SMTP's server speaks first: no request to read."""
        with contextlib.suppress(OSError), conn:
            with self._lock:
                self.requests += 1
                if self.first_request_at is None:
                    self.first_request_at = time.monotonic()
            while not self._closed.is_set():
                conn.sendall(b"220-mail.example.com still greeting\r\n")
                time.sleep(self.every)


@contextlib.contextmanager
def running(server: S) -> Iterator[S]:
    """`server` until the block ends (anything with a `close()`)."""
    try:
        yield server
    finally:
        server.close()
