"""Qt's own messages (qWarning & co.) go to Python logging under the "qt" logger, with every other message."""

from __future__ import annotations

import logging

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

log = logging.getLogger("qt")
LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}
# Harmless noise on offscreen/Xvfb displays.
IGNORED = ("QPlatformNativeInterface::systemTrayWindowChanged",)


def _handler(kind: QtMsgType, context: QMessageLogContext, message: str) -> None:
    if any(s in message for s in IGNORED):
        return
    log.log(LEVELS.get(kind, logging.WARNING), "%s", message)


def install_qt_message_handler() -> None:
    qInstallMessageHandler(_handler)
