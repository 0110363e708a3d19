"""Text a server sent, made safe to show: control characters escaped, cut to a length a line can hold.

An error description, a 403 body, an in-stream error's `message` and `code`, a hub's status text: whatever a
tenant, an identity provider or a hub says reaches the terminal (CLI lines, logs on stderr) and the window
(status bar, tray, notifications, dialogs). Shown raw, an ESC sequence clears the screen or recolours text,
CR overwrites the state line, LF splits a one-line message in two, and a bidi override reorders what the user
reads. Every place that takes such text into a message passes it through `shown()` first. It is idempotent, so
text passed twice (once where it is read, once where the whole line is printed) stays the same.

Escaped: everything `str.isprintable()` refuses except spaces — C0 and C1 controls, DEL, line and paragraph
separators, the invisible format characters (bidi embeddings, overrides and isolates, zero-width marks), lone
surrogates that undecodable bytes leave behind. Each becomes a visible escape as `repr()` writes it (`\\x1b`,
`\\n`, `\\u202e`), so the text stays readable and nothing in it acts on the terminal.
"""

from __future__ import annotations

import unicodedata
from typing import Final

SHOWN_LIMIT: Final = 300  # characters: a sentence or two; more is a page of HTML or an attack, not a message
ELLIPSIS: Final = "…"
_SHORT: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(char: str) -> str:
    """One character as it is shown: itself, or its visible escape when it is a control or format character."""
    if char.isprintable() or unicodedata.category(char) == "Zs":
        return char
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def shown(text: object, limit: int | None = SHOWN_LIMIT) -> str:
    """`text` (a server's words, or anything holding them) with control characters escaped and, when longer than
    `limit` characters, cut to `limit` with an ellipsis at the end. `limit=None` escapes without cutting."""
    raw = text if isinstance(text, str) else str(text)
    if raw.isprintable() and (limit is None or len(raw) <= limit):
        return raw  # nearly every message: nothing to do
    if limit is None:
        return "".join(map(escaped, raw))
    # Each character shows as one or more, so the first `limit + 1` tell whether the text must be cut.
    pieces = [escaped(char) for char in raw[: limit + 1]]
    if len(raw) <= limit and sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    budget, size, kept = limit - len(ELLIPSIS), 0, []
    for piece in pieces:  # cut between escapes, never inside one
        if size + len(piece) > budget:
            break
        kept.append(piece)
        size += len(piece)
    return "".join(kept) + ELLIPSIS


__all__ = ["ELLIPSIS", "SHOWN_LIMIT", "escaped", "shown"]
