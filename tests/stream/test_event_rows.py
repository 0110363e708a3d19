"""The engine's one-pass decoding (stream/event_rows.py) against the wire models it stands in for: whatever it
accepts the models accept, with the very same row; it covers every event a real stream sends; and whatever it
leaves (valid uncommon forms, every invalid frame) goes to the models, who store it or reject it as before."""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_events.simulator.testing import running_simulator
from tenant_events.store.records import EventRow
from tenant_events.stream.event_rows import event_row, numbers_plain
from tenant_events.stream.sse_decoder import SSEDecoder, SSEFrame
from tenant_events.wire import MessageRejected, decode_frame_timed
from tenant_events.wire.messages import EventMessage

RECEIVED = 1_700_000_000.25


def models_row(name: str, data: str) -> EventRow | None:
    """The row the wire models make of a frame (the engine's other path), None when they reject it."""
    try:
        message, time_text = decode_frame_timed(name, data)
    except MessageRejected:
        return None
    if not isinstance(message, EventMessage):
        return None
    return EventRow.from_message(message, data, RECEIVED, time_text)


def holds_to_the_models(name: str, data: str) -> EventRow | None:
    fast = event_row(name, data, RECEIVED)
    if fast is not None:
        assert fast == models_row(name, data), (name, data[:300])
    return fast


def _frames(**options: Any) -> list[tuple[str, str]]:
    decoder, frames = SSEDecoder(1 << 21), []
    with running_simulator(heartbeat=0.2, **options) as sim, httpx.Client(timeout=30) as client:
        headers = {"Authorization": f"Bearer {sim.mint_token()}"}
        params = {"from_timestamp": "2000-01-01T00:00:00Z"}
        with client.stream("GET", sim.events_url, params=params, headers=headers) as response:
            for chunk in response.iter_bytes():
                frames += [(f.event, f.data) for f in decoder.feed(chunk) if f.event != "offset-only"]
                if len(frames) >= options["backlog"]:
                    break
    return frames


@pytest.fixture(scope="module")
def frames() -> list[tuple[str, str]]:
    """Events of both id lengths and both extension spellings, of all 22 types."""
    return _frames(seed=21, backlog=2500) + _frames(seed=22, backlog=800, id_length=22, real_names=True)


def test_every_event_a_stream_sends_takes_the_one_pass_with_the_models_row(frames):
    assert len({name for name, _ in frames}) == 22
    for name, data in frames:
        assert holds_to_the_models(name, data) is not None, data[:300]


Edit = Callable[[dict[str, Any]], None]


def _set(key: str, value: Any) -> Edit:
    return lambda m: m["event"].__setitem__(key, value)


def _rename(old: str, new: str) -> Edit:
    def edit(m: dict[str, Any]) -> None:
        env = m["event"]
        if old in env:
            env[new] = env.pop(old)

    return edit


# Valid forms the one pass leaves to the models, invalid ones, and the edges of each check.
EDITS: list[Edit] = [
    _set("time", "2025-02-02T17:56:01.573+00:00"),
    _set("time", "2025-02-02T18:56:01.573+01:00"),
    _set("time", "2025-02-02T17:56:01Z"),
    _set("time", "2025-02-02T17:56:01.5734Z"),
    _set("time", "2025-02-30T17:56:01.573Z"),
    _set("time", "2025-13-02T17:56:01.573Z"),
    _set("time", "2025-02-02T24:00:00.000Z"),
    _set("time", "2025-02-02T23:59:60.000Z"),
    _set("time", "2025-02-02t17:56:01.573z"),
    _set("time", "２０２５-02-02T17:56:01.573Z"),
    _set("time", "2025-02-02T17:56:01.573Z\n"),
    _set("time", 1_738_518_961),
    _set("id", "evt_" + "a" * 16 + "\n"),
    _set("id", "evt_" + "a" * 15 + "é"),
    _set("id", "evt_" + "a" * 17),
    _set("id", "evt_" + "١" * 16),
    _set("id", "evt_" + "a" * 22),
    _set("source", "urn:tenant:"),
    _set("source", "urn:tenant:a b"),
    _set("source", "urn:tenant:x\n"),
    _set("source", "urn:tenant:" + "x" * 600),
    _set("source", "http://not-a-urn"),
    _set("specversion", ""),
    _set("specversion", "1" * 17),
    _set("xpurpose", "test"),
    _set("xpurpose", None),
    _set("xpurpose", "Test"),
    _set("a0purpose", "test"),
    _set("xtenant", "other-tenant"),
    _set("xtenant", "ab"),
    _set("xtenant", "abc\n"),
    _set("xstream", "est_" + "b" * 16),
    _set("data", []),
    _set("data", "text"),
    _set("data", {"n": 10**400}),
    _set("data", {"n": 1e300}),
    _set("extra", 1),
    _set("type", "user.exploded"),
    _rename("a0tenant", "xtenant"),
    _rename("xtenant", "a0tenant"),
    _rename("a0stream", "xstream"),
    _rename("xstream", "a0stream"),
    lambda m: m.__setitem__("type", m["event"]["type"]),
    lambda m: m.__setitem__("type", "group.created"),
    lambda m: m.__setitem__("offset", ""),
    lambda m: m.__setitem__("offset", "A" * 1025),
    lambda m: m.__setitem__("extra", True),
    lambda m: m["event"].pop("data", None),
    lambda m: m["event"].pop("time", None),
]

# Text edits a serialiser would never make: numbers out of a double's range (orjson refuses them, msgspec would
# skip over them), nesting past orjson's limit, duplicate keys.
TEXT_EDITS: list[Callable[[str], str]] = [
    lambda t: t.replace('"data":{', '"data":{"far":1e999,', 1),
    lambda t: t.replace('"data":{', '"data":{"far":-2.5E+400,', 1),
    lambda t: t.replace('"data":{', '"data":{"far":[1E0308 ],', 1),
    lambda t: t.replace('"data":{', '"data":{"far":' + "9" * 320 + ",", 1),
    lambda t: t.replace('"data":{', '"data":{"near":1e99,"small":1e-400,"big":' + "9" * 30 + ",", 1),
    lambda t: t.replace('"data":{', '"data":{"deep":' + "[" * 1100 + "]" * 1100 + ",", 1),
    lambda t: t.replace('"data":{', '"data":{"a":1,"a":2,', 1),
    lambda t: t.replace('"specversion"', '"specversion":"1","specversion"', 1),
    lambda t: t.replace('"id":"', '"id":7,"id":"', 1),
    lambda t: t[:-1],
    lambda t: t + " ",
    lambda t: " " + t,
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_what_the_one_pass_accepts_the_models_accept_with_the_same_row(frames, data):
    name, text = data.draw(st.sampled_from(frames))
    message = orjson.loads(text)
    for edit in data.draw(st.lists(st.sampled_from(EDITS), max_size=3)):
        edit(message)
    try:
        text = orjson.dumps(message).decode()
    except orjson.JSONEncodeError:  # 10**400: written as a JSON number all the same
        text = json.dumps(message, separators=(",", ":"))
    for edit_text in data.draw(st.lists(st.sampled_from(TEXT_EDITS), max_size=2)):
        text = edit_text(text)
    holds_to_the_models(name, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(), cut=st.integers(0, 2000), char=st.sampled_from('{}[]:,"\\0123456789eE+-.tfnul \t\n\x00é')
)
def test_a_damaged_frame_is_never_taken_where_the_models_refuse_it(frames, data, cut, char):
    name, text = data.draw(st.sampled_from(frames))
    at = cut % len(text)
    how = data.draw(st.sampled_from(["replace", "insert", "delete"]))
    text = text[:at] + ("" if how == "delete" else char) + text[at + (how != "insert") :]
    holds_to_the_models(name, text)


def test_numbers_beyond_a_double_are_left_to_the_models_who_refuse_them(frames):
    name, text = frames[0]
    for number in ("1e999", "-1E+400", "9" * 320):
        far = text.replace('"data":{', f'"data":{{"n":{number},', 1)
        assert event_row(name, far, RECEIVED) is None and models_row(name, far) is None
    near = text.replace('"data":{', '"data":{"n":1e99,"m":' + "9" * 150 + ",", 1)
    assert holds_to_the_models(name, near) is not None


def test_valid_uncommon_forms_are_stored_through_the_models(frames):
    name, text = frames[0]
    message = orjson.loads(text)
    edited = copy.deepcopy(message)
    edited["event"]["time"] = "2025-02-02T18:56:01.573+01:00"
    data = orjson.dumps(edited).decode()
    row = models_row(name, data)
    assert event_row(name, data, RECEIVED) is None
    assert row is not None and row.time == "2025-02-02T17:56:01.573Z"


def _read_as_received(frames: list[tuple[str, str]], cuts: list[int]) -> list[tuple[list[SSEFrame], bool]]:
    """The frames rendered as a stream and fed in reads cut at `cuts`: each read's frames and whether the engine
    would take their numbers as looked at (`numbers_plain` of the bytes the decoder cut them from)."""
    body = "".join(
        f"event: {name}\nid: {i}\ndata: {text}\n\n" for i, (name, text) in enumerate(frames)
    ).encode()
    decoder, reads = SSEDecoder(1 << 21), []
    points = sorted({0, len(body), *(c % len(body) for c in cuts)})
    for a, b in itertools.pairwise(points):
        got = decoder.feed(body[a:b])
        if got:
            reads.append((got, numbers_plain(decoder.span)))
    return reads


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), cuts=st.lists(st.integers(0, 100_000), max_size=6))
def test_one_look_at_a_whole_read_keeps_every_frame_with_a_far_number_from_the_one_pass(frames, data, cuts):
    """The engine looks at the numbers of each network read once, not frame by frame: a far number (or any other
    text edit) in any frame of a read, wherever the reads are cut, still never gets past the models."""
    picked = data.draw(st.lists(st.sampled_from(frames), min_size=1, max_size=4))
    edited = []
    for name, text in picked:
        for edit_text in data.draw(st.lists(st.sampled_from(TEXT_EDITS), max_size=2)):
            text = edit_text(text)
        edited.append((name, text))
    taken = 0
    for read, plain in _read_as_received(edited, cuts):
        for frame in read:
            fast = event_row(frame.event, frame.data, RECEIVED, numbers_checked=plain)
            if fast is not None:
                assert fast == models_row(frame.event, frame.data), frame.data[:300]
                taken += 1
    assert taken >= sum(holds_to_the_models(name, text) is not None for name, text in edited)


def test_a_far_number_anywhere_in_a_read_makes_the_engine_look_at_each_frame(frames):
    (name, text), (other, plain_text) = frames[0], frames[1]
    for number in ("1e999", "-1E+400", "9" * 320, "1E0308"):
        far = text.replace('"data":{', f'"data":{{"n":{number},', 1)
        [(read, plain)] = _read_as_received([(other, plain_text), (name, far)], [])
        assert not plain and len(read) == 2
    [(_, plain)] = _read_as_received(frames[:50], [])
    assert plain, "a stream's own reads need no look frame by frame"
