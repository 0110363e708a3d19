"""One app per data dir: a second start hands its argv to the first over a QLocalSocket and exits.

Keyed on the resolved data dir (STYLE.md §8) and the user id, so tests with their own `--data-dir` never
collide with a running app. Recipe and pitfalls: shared/reference/desktop.md §7.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

log = logging.getLogger(__name__)


def server_name(data_dir: Path) -> str:
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"tenant-events-{os.getuid()}-{digest}"


def hand_over(name: str, argv: list[str], timeout_ms: int = 500) -> bool:
    """True when a primary instance answered and took `argv`."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write(json.dumps({"argv": argv}).encode() + b"\n")
    sock.waitForBytesWritten(timeout_ms)
    sock.disconnectFromServer()
    return True


class SingleInstance(QObject):
    """The primary's listener; `activated` carries the argv of each later start."""

    activated = Signal(list)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(self.name)  # stale socket of a crashed primary
            return self._server.listen(self.name)
        log.warning("single-instance listen failed: %s", self._server.errorString())
        return False

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while (conn := self._server.nextPendingConnection()) is not None:
            conn.readyRead.connect(lambda c=conn: self._read(c))
            conn.disconnected.connect(conn.deleteLater)

    def _read(self, conn: QLocalSocket) -> None:
        if not conn.canReadLine():
            return
        line = bytes(conn.readLine().data())
        try:
            argv = json.loads(line)["argv"]
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed single-instance message")
            return
        self.activated.emit([str(a) for a in argv])
