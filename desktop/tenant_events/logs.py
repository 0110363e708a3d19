"""Logging set-up: a rotating file in the log dir, stderr, an in-memory ring for the in-app log view.

Every record passes a redaction filter first, so a token that slips into a message (a URL with `code=`, a
`Bearer` header, a JWT) is masked before any handler sees it. `TENANT_EVENTS_LOG_JSON=1` switches stderr to
one JSON object per line, which the end-to-end tests wait on.
"""

from __future__ import annotations

import collections
import json
import logging
import logging.handlers
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

_SECRET_PATTERNS: Final = (
    re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWTs
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    re.compile(
        r"(?i)((?:access_token|refresh_token|id_token|code|code_verifier|client_secret|password|token)"
        r"[\"']?\s*[=:]\s*[\"']?)[^&\s\"',}]+"
    ),
)
REDACTED: Final = "[redacted]"


def redact(text: str) -> str:
    """Mask anything that looks like a token or secret."""
    text = _SECRET_PATTERNS[0].sub(REDACTED, text)
    text = _SECRET_PATTERNS[1].sub(lambda m: m.group(1) + REDACTED, text)
    return _SECRET_PATTERNS[2].sub(lambda m: m.group(1) + REDACTED, text)


class RedactingFilter(logging.Filter):
    """Rewrites each record's message with secrets masked (runs before formatting)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "t": record.created,
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_text:
            out["exc"] = record.exc_text
        return json.dumps(out, ensure_ascii=False)


class RingHandler(logging.Handler):
    """Keeps the last N formatted records for the in-app log view."""

    def __init__(self, capacity: int = 2000) -> None:
        super().__init__()
        self.records: collections.deque[str] = collections.deque(maxlen=capacity)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(self.format(record))


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Creates the log and each rotated successor 0600 from the start (a umask would leave them 0644)."""

    def _open(self) -> Any:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # also tightens a file an older version created with the umask
        return open(fd, self.mode, encoding=self.encoding, errors=self.errors)


RING: Final = RingHandler()
_FORMAT: Final = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


def setup_logging(log_dir: Path | None, level: int = logging.INFO, *, stderr: bool = True) -> None:
    """Install the handlers once per process; later calls replace them (tests call it per data dir)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_tenant_events", False):
            root.removeHandler(handler)
            handler.close()
    redactor = RedactingFilter()
    handlers: list[logging.Handler] = [RING]
    if log_dir is not None:
        try:
            log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            handlers.append(
                PrivateRotatingFileHandler(
                    log_dir / "tenant-events.log", maxBytes=5_000_000, backupCount=5, encoding="utf-8"
                )
            )
        except OSError as exc:  # a read-only or full data dir must not stop the app before it can say so
            print(
                f"tenant-events: cannot write the log in {log_dir} ({exc.strerror or exc}); not logging to a file",
                file=sys.stderr,
            )
    if stderr:
        stream_handler = logging.StreamHandler(sys.stderr)
        if os.environ.get("TENANT_EVENTS_LOG_JSON") == "1":
            stream_handler.setFormatter(JsonFormatter())
        handlers.append(stream_handler)
    for handler in handlers:
        if not isinstance(handler.formatter, JsonFormatter):
            handler.setFormatter(logging.Formatter(_FORMAT))
        handler.addFilter(redactor)
        handler._tenant_events = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(min(level, root.level) if root.level else level)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
