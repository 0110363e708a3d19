"""One app per data dir: a second start hands its argv to the first over a Unix socket and exits.

Keyed on the resolved data dir and the user id, so tests with their own `--data-dir` never collide with a
running app. The socket sits in a folder only this user can enter (the session's runtime folder, else a
private folder under the temp dir), so no other user can hand the app an argv. Plain sockets and a
QSocketNotifier instead of Qt's local server: the bundle then needs none of Qt's network library.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, QSocketNotifier, Signal

log = logging.getLogger(__name__)

MAX_MESSAGE = 64 * 1024  # an argv is a few hundred bytes; anything longer is not a hand-over


def _socket_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_dir() and os.access(runtime, os.W_OK):
        return Path(runtime)
    private = Path(tempfile.gettempdir()) / f"tenant-events-{os.getuid()}"
    private.mkdir(mode=0o700, exist_ok=True)
    info = private.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{private} is not a private folder of this user")
    os.chmod(private, 0o700)
    return private


def server_name(data_dir: Path) -> str:
    """The path of the running instance's socket for this data dir."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return str(_socket_dir() / f"tenant-events-{os.getuid()}-{digest}.sock")


def hand_over(name: str, argv: list[str], timeout_s: float = 0.5) -> bool:
    """True when a primary instance answered and took `argv`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        try:
            sock.connect(name)
            sock.sendall(json.dumps({"argv": argv}).encode() + b"\n")
        except OSError:
            return False
    return True


def _answers(name: str) -> bool:
    """Whether a live primary listens on `name` (a connect and close: it reads an empty message)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        try:
            sock.connect(name)
        except OSError:
            return False
    return True


class _Reader(QObject):
    """One hand-over connection, read without blocking the UI until its newline or its end."""

    def __init__(self, conn: socket.socket, owner: SingleInstance) -> None:
        super().__init__(owner)
        self._conn, self._owner, self._buf = conn, owner, b""
        self._notifier = QSocketNotifier(conn.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)

    def _read(self) -> None:
        try:
            chunk = self._conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        self._buf += chunk
        if chunk and b"\n" not in self._buf and len(self._buf) < MAX_MESSAGE:
            return
        self.close()
        self._owner.take(self._buf.split(b"\n", 1)[0])

    def close(self) -> None:
        self._notifier.setEnabled(False)
        self._conn.close()
        self.deleteLater()


class SingleInstance(QObject):
    """The primary's listener; `activated` carries the argv of each later start."""

    activated = Signal(list)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server: socket.socket | None = None
        self._notifier: QSocketNotifier | None = None

    def listen(self) -> bool:
        if _answers(self.name):
            log.warning("single-instance listen failed: another instance answers on %s", self.name)
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)  # stale socket of a crashed primary
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(self.name)
            os.chmod(self.name, 0o600)
            server.listen(8)
        except OSError as exc:
            server.close()
            log.warning("single-instance listen failed: %s", exc)
            return False
        server.setblocking(False)
        self._server = server
        self._notifier = QSocketNotifier(server.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._accept)
        return True

    def close(self) -> None:
        if self._server is None:
            return
        if self._notifier is not None:
            self._notifier.setEnabled(False)
        self._server.close()
        self._server = None
        with contextlib.suppress(OSError):
            os.unlink(self.name)

    def _accept(self) -> None:
        while self._server is not None:
            try:
                conn, _ = self._server.accept()
            except (BlockingIOError, OSError):
                return
            conn.setblocking(False)
            _Reader(conn, self)

    def take(self, line: bytes) -> None:
        if not line:
            return  # a probe (another start checking whether this one is alive)
        try:
            argv = json.loads(line)["argv"]
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed single-instance message")
            return
        if not isinstance(argv, list):
            log.warning("ignored a malformed single-instance message")
            return
        self.activated.emit([str(a) for a in argv])
