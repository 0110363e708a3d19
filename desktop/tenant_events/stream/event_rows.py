"""An event frame straight to its `EventRow` in one msgspec pass: the common case of the stream's hot path.

The wire models (wire/messages.py, wire/envelope.py) define what a valid message is, with their field-named
errors. Validating a frame through them costs ~16 µs: orjson builds every dict of the payload and pydantic walks
it, though the store keeps the payload as the text received. Here msgspec decodes only the envelope's fields the
row needs, checked against constraints at least as strict as the models', and skips over `data` (checked to be a
well-formed JSON object, not built): ~2 µs. The rule is one-sided: what this path accepts the models accept,
with the same row (tests/stream/test_event_rows.py holds it against them); anything else here — an uncommon but
valid form (a `time` with an offset, both spellings of an extension), or an invalid frame — returns None, and the
engine decodes the frame through the models as before, which store it or reject it with their reason.
"""

from __future__ import annotations

import re
from typing import Annotated, Final

import msgspec
from msgspec import UNSET, Meta, UnsetType

from tenant_events.store.records import EventRow
from tenant_events.wire.envelope import (
    EVENT_ID_PATTERN,
    PURPOSE_PATTERN,
    SOURCE_PATTERN,
    STREAM_ID_PATTERN,
    TENANT_PATTERN,
)
from tenant_events.wire.event_types import EventType
from tenant_events.wire.messages import MAX_OFFSET_LENGTH

SEEN_MAX: Final = (
    4096  # values each check remembers as valid (a stream repeats its tenant, stream, source, minute)
)


class _Matches:
    """A pattern of the models, checked once per distinct value. A regex costs about a microsecond a call, more
    than the rest of a frame's decoding; a stream repeats its tenant, stream id, source and minute."""

    def __init__(self, pattern: str) -> None:
        # `$` in Python's re also matches before a final newline; `\Z` only at the end, as the models read `$`.
        assert pattern.startswith("^") and pattern.endswith("$"), pattern
        self._search = re.compile(pattern[:-1] + r"\Z").search
        self._seen: set[str] = set()

    def __call__(self, value: str) -> bool:
        if value in self._seen:
            return True
        if self._search(value) is None:
            return False
        if len(self._seen) >= SEEN_MAX:
            self._seen.clear()
        self._seen.add(value)
        return True


_tenant: Final = _Matches(TENANT_PATTERN)
_stream: Final = _Matches(STREAM_ID_PATTERN)
_source: Final = _Matches(SOURCE_PATTERN)
_purpose: Final = _Matches(PURPOSE_PATTERN)
# The minute of the form the store keeps (records.py), `YYYY-MM-DDTHH:MM` in ASCII digits, each field in its
# range; whether the day exists (no 30 February) is checked when the row is made.
_minute: Final = _Matches(
    r"^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]$"
)
assert EVENT_ID_PATTERN == r"^evt_(?:[a-zA-Z0-9]{16}|[a-zA-Z0-9]{22})$", "_event_id() follows the pattern"


def _event_id(value: str) -> bool:
    """EVENT_ID_PATTERN without a regex (each id is new): ASCII letters and digits are what isalnum() accepts
    in an ASCII string."""
    return len(value) in (20, 26) and value.startswith("evt_") and value.isascii() and value[4:].isalnum()


def _canonical_time(value: str) -> bool:
    """`YYYY-MM-DDTHH:MM:SS.mmmZ` (the stored form), its minute checked by `_minute`."""
    return (
        len(value) == 24
        and value.isascii()
        and value[16] == ":"
        and "0" <= value[17] <= "5"
        and value[18].isdigit()
        and value[19] == "."
        and value[20:23].isdigit()
        and value[23] == "Z"
        and _minute(value[:16])
    )


# Numbers JSON allows and orjson (and so the models' path) refuses: out of a double's range. Such a number has an
# exponent of three digits or more, or a run of 200 digits (its integer part, with an exponent under 100). In the
# text's shape (digits as "0"; "E", "+" and "-" as "e"; "[" as "{") each holds a plain substring, looked for in
# C; where one is found (one frame in six: hexadecimal ids such as "4e1558bf", a negative number) a regex looks
# for an exponent that ends as a number ends.
_SHAPE: Final = bytes.maketrans(b"123456789E+-[", b"000000000eee{")
_DIGITS_RUN: Final = b"0" * 200
_FAR_EXPONENT: Final = re.compile(rb"e000+[,}\] \t\n\r]")


# orjson refuses arrays and objects nested deeper than 1,024; how deep msgspec goes depends on the interpreter's
# recursion limit. A frame with this many of "[" and "{" is left to the models' path (it is over 2 KB long).
DEEP: Final = 1000


def _far_number(data: str) -> bool:
    """A number out of a double's range, or nesting near orjson's limit (both refused by the models' path)."""
    shape = data.encode().translate(_SHAPE)
    if len(shape) > 2 * DEEP and shape.count(b"{") >= DEEP:
        return True
    if b"e000" in shape:
        return _FAR_EXPONENT.search(shape) is not None or _DIGITS_RUN in shape
    return _DIGITS_RUN in shape


Tenant = Annotated[str, Meta(min_length=3, max_length=63)]


class _Envelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    specversion: Annotated[str, Meta(min_length=1, max_length=16)]
    type: str
    source: Annotated[str, Meta(max_length=512)]
    id: str
    time: str
    data: msgspec.Raw
    xtenant: Tenant | UnsetType = UNSET
    a0tenant: Tenant | UnsetType = UNSET
    xstream: str | UnsetType = UNSET
    a0stream: str | UnsetType = UNSET
    xpurpose: str | UnsetType | None = UNSET
    a0purpose: str | UnsetType | None = UNSET


class _Message(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    offset: Annotated[str, Meta(min_length=1, max_length=MAX_OFFSET_LENGTH)]
    event: _Envelope
    type: str | UnsetType = UNSET


_decode: Final = msgspec.json.Decoder(_Message).decode
_FAMILY: Final = {t.value: t.family for t in EventType}


def event_row(name: str, data: str, received_at: float) -> EventRow | None:
    """The row of an event frame (`name`: the SSE event name) when it has the common valid form; None: decode the
    frame through the wire models instead."""
    family = _FAMILY.get(name)
    if family is None:  # another kind of message, or an unknown name (the models' path names it)
        return None
    try:
        message = _decode(data)
    except (msgspec.DecodeError, ValueError, RecursionError):  # (a ValidationError is a DecodeError; nesting
        return None  # deeper than msgspec goes raises RecursionError)
    env = message.event
    if env.type != name or (message.type is not UNSET and message.type != name):
        return None
    tenant, stream, purpose = (
        _either(env.xtenant, env.a0tenant),
        _either(env.xstream, env.a0stream),
        _either(env.xpurpose, env.a0purpose),
    )
    if not isinstance(tenant, str) or not isinstance(stream, str) or purpose is _BOTH:
        return None
    if isinstance(purpose, str) and not _purpose(purpose):
        return None
    if not (
        _event_id(env.id)
        and _canonical_time(env.time)
        and _tenant(tenant)
        and _stream(stream)
        and _source(env.source)
    ):
        return None
    if memoryview(env.data)[0] != 0x7B or _far_number(data):  # data is a JSON object: "{"
        return None
    try:
        return EventRow.at_canonical_time(
            env.id,
            message.offset,
            name,
            family,
            env.time,
            env.source,
            tenant,
            purpose if isinstance(purpose, str) else None,
            data,
            received_at,
        )
    except ValueError:  # a day that does not exist
        return None


_BOTH: Final = object()


def _either(x: object, a0: object) -> object:
    """An extension under whichever of its two names the event used (UNSET: neither); _BOTH when it used both,
    which the models refuse."""
    if x is UNSET:
        return a0
    return x if a0 is UNSET else _BOTH
