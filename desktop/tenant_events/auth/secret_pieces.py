"""A secret longer than one keyring entry keeps, in pieces, so that a reader does not get a wrong value.

The slot itself holds a marker: `chunked:N` (the pieces are `<account>#0…#N-1`, the first set) or `chunked:N:b`
(`<account>#b0…#bN-1`, the second). A new value in pieces goes into the set the marker does not name, then the
marker moves to it, then the old set is removed. So a write that stops part-way (a crash, a keyring that fails
between two pieces) leaves the old value whole, and a reader in another process does not join pieces of two
values: it either finds the set its marker named, or sees the marker has moved and reads again. (Written over
the same set, a write that stopped after its first piece left a marker over new and old pieces, and that mix
was returned as the secret.) What it cannot see: two whole writes while it reads a value's few pieces, moving
the marker away and back; a secret is written once per sign-in refresh, minutes apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

CHUNK: Final = 1000  # characters per entry: UTF-16 of 1000 chars fits Windows' 2560-byte blob (keyring#355)
MARK: Final = "chunked:"  # the slot's value when the secret is in pieces
MAX_CHUNKS: Final = 64  # 64,000 characters: far beyond any token; bounds the search for stray pieces
# an older version's marker may count more pieces than MAX_CHUNKS: each is still removed
_MARK_DIGITS: Final = 3
_READS: Final = 8  # a reader whose marker moved while it read the pieces reads again, this many times in all

Set = Literal["", "b"]
Read = Callable[[str], str | None]
Write = Callable[[str, str], None]
Remove = Callable[[str], None]


@dataclass(frozen=True)
class Marker:
    count: int
    set: Set

    def text(self) -> str:
        return f"{MARK}{self.count}" + (f":{self.set}" if self.set else "")


def marker_of(value: str) -> Marker | None:
    """The marker `value` is, or None when it is a secret of its own. An older version wrote markers past
    MAX_CHUNKS (a secret it could not read back): their pieces are read and removed all the same."""
    if not value.startswith(MARK):
        return None
    digits, colon, which = value[len(MARK) :].partition(":")
    if colon and which != "b":
        return None
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MARK_DIGITS or int(digits) < 1:
        return None
    return Marker(int(digits), "b" if colon else "")


def piece(account: str, which: Set, i: int) -> str:
    return f"{account}#{which}{i}"


def fits_whole(secret: str) -> bool:
    """Whether `secret` goes in the slot itself (short, and not to be taken for a marker)."""
    return len(secret) <= CHUNK and not secret.startswith(MARK)


def read(account: str, get: Read) -> str | None:
    """The slot's secret; None when it holds none (or its pieces stay gone)."""
    value = get(account)
    for _ in range(_READS):
        if value is None:
            return None
        marker = marker_of(value)
        if marker is None:
            return value
        parts = [get(piece(account, marker.set, i)) for i in range(marker.count)]
        again = get(account)  # the marker moved meanwhile: the pieces may be of two values, or gone
        if again == value and all(p is not None for p in parts):
            return "".join(str(p) for p in parts)
        # A piece gone under a marker that reads the same: two writes moved it away and back while the pieces
        # were read (each new value's pieces go into the set the marker does not name), so read again.
        value = again
    return None


def write(account: str, secret: str, get: Read, put: Write, remove: Remove) -> None:
    """Writes `secret` into the slot, then removes what the value before it (or a write that stopped) left."""
    before = get(account)
    old = marker_of(before) if before is not None else None
    if fits_whole(secret):
        put(account, secret)
        kept: Marker | None = None
    else:
        which: Set = "b" if old is not None and old.set == "" else ""
        chunks = [secret[i : i + CHUNK] for i in range(0, len(secret), CHUNK)]
        for i, chunk in enumerate(chunks):
            put(piece(account, which, i), chunk)
        kept = Marker(len(chunks), which)
        put(account, kept.text())
    for which in ("", "b"):
        start = kept.count if kept is not None and kept.set == which else 0
        known = old.count if old is not None and old.set == which else 0
        remove_pieces(account, which, start, known, get, remove)


def remove_pieces(account: str, which: Set, start: int, known: int, get: Read, remove: Remove) -> None:
    """Pieces `start…` of one set: the `known` ones, then any stray ones after them (a write that stopped)."""
    i = start
    while i < known or (i < MAX_CHUNKS and get(piece(account, which, i)) is not None):
        remove(piece(account, which, i))
        i += 1


def delete(account: str, get: Read, remove: Remove) -> None:
    """The slot and every piece of either set."""
    current = get(account)
    old = marker_of(current) if current is not None else None
    remove(account)
    for which in ("", "b"):
        remove_pieces(
            account, which, 0, old.count if old is not None and old.set == which else 0, get, remove
        )
