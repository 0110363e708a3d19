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
from datetime import datetime, timedelta
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
    4096  # values each cache below remembers (a stream repeats its tenant, stream, source, minute)
)


def _full(pattern: str) -> re.Pattern[str]:
    """A pattern of the models as a whole-text regex: `$` in Python's re also matches before a final newline;
    `\\Z` only at the end, as the models read `$`."""
    assert pattern.startswith("^") and pattern.endswith("$"), pattern
    return re.compile(pattern[:-1] + r"\Z")


_TENANT: Final = _full(TENANT_PATTERN)
_STREAM: Final = _full(STREAM_ID_PATTERN)
_SOURCE: Final = _full(SOURCE_PATTERN)
_PURPOSE: Final = _full(PURPOSE_PATTERN)
# The minute of the form the store keeps (records.py), `YYYY-MM-DDTHH:MM` in ASCII digits, each field in its
# range; whether the day exists (no 30 February) is checked when its milliseconds are worked out.
_MINUTE: Final = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])T(?:[01][0-9]|2[0-3]):[0-5][0-9]\Z"
)
# The rest of a stored time, `:SS` and `.mmmZ`, to milliseconds: a lookup both checks and converts it.
_SECONDS: Final = {f":{s:02d}": s * 1000 for s in range(60)}
_MILLIS: Final = {f".{m:03d}Z": m for m in range(1000)}
_EPOCH: Final = datetime(1970, 1, 1)
_MS: Final = timedelta(milliseconds=1)
assert EVENT_ID_PATTERN == r"^evt_(?:[a-zA-Z0-9]{16}|[a-zA-Z0-9]{22})$", "event_row() checks ids as it says"

# What a stream repeats, checked against the models' patterns once: a regex costs about a microsecond a call,
# more than the rest of a frame's decoding: each (tenant, stream id, source, purpose) found valid, and each valid
# minute with its unix milliseconds.
_contexts: set[tuple[str, str, str, str | None]] = set()
_minutes: dict[str, int] = {}


def _context_valid(context: tuple[str, str, str, str | None]) -> bool:
    tenant, stream, source, purpose = context
    if not (
        _TENANT.match(tenant)
        and _STREAM.match(stream)
        and _SOURCE.match(source)
        and (purpose is None or _PURPOSE.match(purpose))
    ):
        return False
    if len(_contexts) >= SEEN_MAX:
        _contexts.clear()
    _contexts.add(context)
    return True


def _minute_ms(minute: str) -> int | None:
    """Unix milliseconds of a minute `YYYY-MM-DDTHH:MM` (UTC), kept; None when it is not one, or its day does
    not exist."""
    if not _MINUTE.match(minute):
        return None
    try:
        ms = (datetime.fromisoformat(minute) - _EPOCH) // _MS
    except ValueError:  # a day that does not exist
        return None
    if len(_minutes) >= SEEN_MAX:
        _minutes.clear()
    _minutes[minute] = ms
    return ms


# Numbers JSON allows and orjson (and so the models' path) refuses: out of a double's range. Such a number has an
# exponent of three digits or more, or a run of 200 digits (its integer part, with an exponent under 100). In the
# text's shape (digits as "0"; "E", "+" and "-" as "e") each holds a plain substring, looked for in C; where one is
# found (hexadecimal ids such as "4e1558bf", a negative number) a regex looks for an exponent that ends as a number
# ends. The shape of a text holds every substring of the shape of each frame in it, so one look at a whole network
# read (`numbers_plain`, about a microsecond a frame) stands for a look at each of its frames.
_SHAPE: Final = bytes.maketrans(b"123456789E+-", b"000000000eee")
_DIGITS_RUN: Final = b"0" * 200
_FAR_EXPONENT: Final = re.compile(rb"e000+[,}\] \t\n\r]")

# orjson refuses arrays and objects nested deeper than 1,024; how deep msgspec goes depends on the interpreter's
# recursion limit. A frame with this many of "[" and "{" is left to the models' path (it is over 2 KB long).
DEEP: Final = 1000


def numbers_plain(text: bytes) -> bool:
    """True when `text` — one frame's data, or the bytes of several frames as received — can hold no number out of a
    double's range. Looser for several frames (a match across two of them), never stricter: False only means each
    frame is looked at on its own."""
    shape = text.translate(_SHAPE)
    if _DIGITS_RUN in shape:
        return False
    return b"e000" not in shape or _FAR_EXPONENT.search(shape) is None


def _too_deep(data: str) -> bool:
    """Nesting near orjson's limit: as many opening brackets as that takes (so twice as many characters)."""
    return len(data) >= 2 * DEEP and data.count("{") + data.count("[") >= DEEP


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


def event_row(name: str, data: str, received_at: float, numbers_checked: bool = False) -> EventRow | None:
    """The row of an event frame (`name`: the SSE event name) when it has the common valid form; None: decode the
    frame through the wire models instead. `numbers_checked`: `numbers_plain` held for the bytes the frame came
    from, so its numbers need no look of their own.

    One function, its checks written out: it runs for every event, and each Python call it saves is a tenth of a
    microsecond of the engine's budget."""
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
    # Each extension under whichever of its two names the event used; both names at once the models refuse.
    tenant, stream, purpose = env.xtenant, env.xstream, env.xpurpose
    if env.a0tenant is not UNSET:
        if tenant is not UNSET:
            return None
        tenant = env.a0tenant
    if env.a0stream is not UNSET:
        if stream is not UNSET:
            return None
        stream = env.a0stream
    if env.a0purpose is not UNSET:
        if purpose is not UNSET:
            return None
        purpose = env.a0purpose
    elif purpose is UNSET:
        purpose = None
    if tenant is UNSET or stream is UNSET:
        return None
    event_id, moment = env.id, env.time
    # EVENT_ID_PATTERN without a regex (each id is new): ASCII letters and digits are what isalnum() accepts in an
    # ASCII string. The time in the stored form `YYYY-MM-DDTHH:MM:SS.mmmZ`, its parts looked up.
    if not (
        len(event_id) in _ID_LENGTHS
        and event_id.startswith("evt_")
        and event_id.isascii()
        and event_id[4:].isalnum()
        and len(moment) == 24
    ):
        return None
    seconds, millis = _SECONDS.get(moment[16:19]), _MILLIS.get(moment[19:])
    minute = moment[:16]
    minute_ms = _minutes.get(minute)
    if minute_ms is None:
        minute_ms = _minute_ms(minute)
    if seconds is None or millis is None or minute_ms is None:
        return None
    source = env.source
    context = (tenant, stream, source, purpose)
    if context not in _contexts and not _context_valid(context):
        return None
    if memoryview(env.data)[0] != 0x7B:  # data is a JSON object: "{"
        return None
    if not (numbers_checked or numbers_plain(data.encode())) or _too_deep(data):
        return None
    return EventRow.at_canonical_time(
        event_id,
        message.offset,
        name,
        family,
        moment,
        source,
        tenant,
        purpose,
        data,
        received_at,
        minute_ms + seconds + millis,
    )


_ID_LENGTHS: Final = (20, 26)
