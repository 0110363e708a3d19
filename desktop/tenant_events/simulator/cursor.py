"""Opaque stream cursors (`offset`): base64 of the stream epoch and a sequence number.

The contract only says the cursor is an opaque string of at most 1024 characters; the live service's look like
base64 (docs/event-stream.md "Cursors and resume"). Sequence n means "after event n": resuming from it yields event n + 1 first.
The epoch changes when a log is created, so a cursor from another simulator log is recognised as such.
"""

from __future__ import annotations

import base64
import binascii
import struct

_LAYOUT = struct.Struct(">IQ")  # epoch (u32), sequence (u64)
MAX_CURSOR_LENGTH = 1024  # docs/event-stream.md "Limits"


class CursorError(ValueError):
    """The text is not a cursor this simulator wrote."""


def encode(epoch: int, seq: int) -> str:
    """The cursor for position `seq` (0 = before the first event)."""
    return base64.urlsafe_b64encode(_LAYOUT.pack(epoch, seq)).decode("ascii").rstrip("=")


def decode(text: str) -> tuple[int, int]:
    """(epoch, seq) from a cursor; raises CursorError for anything malformed."""
    if not text or len(text) > MAX_CURSOR_LENGTH:
        raise CursorError("bad length")
    padded = text + "=" * (-len(text) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise CursorError("not base64") from exc
    if len(raw) != _LAYOUT.size:
        raise CursorError("wrong size")
    epoch, seq = _LAYOUT.unpack(raw)
    if encode(epoch, seq) != text:  # reject non-canonical spellings (e.g. trailing bits, '+' for '-')
        raise CursorError("not canonical")
    return int(epoch), int(seq)
