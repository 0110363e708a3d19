"""Property tests tying the two independent implementations together (client wire models and simulator):

- every message the simulator emits over real HTTP (events of all 22 types, both id lengths, both extension
  prefixes, heartbeats, each in-stream error) validates with the client's wire models;
- any single mutation that breaks the contract is rejected with the offending field named, as are the
  simulator's deliberately malformed messages.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.sse import parse_frames
from tenant_events.simulator.activity import Activity
from tenant_events.simulator.config import SimulatorConfig
from tenant_events.simulator.event_log import EventLog
from tenant_events.simulator.storage import SimStore
from tenant_events.simulator.testing import running_simulator
from tenant_events.wire import decode_frame
from tenant_events.wire.event_types import EVENT_TYPE_NAMES
from tenant_events.wire.messages import ErrorMessage, EventMessage, MessageRejected, OffsetOnlyMessage

ALL = {"from_timestamp": "2000-01-01T00:00:00Z"}
ERROR_CODES = (
    "invalid_cursor",
    "cursor_expired",
    "timeout",
    "payload_too_large",
    "processing_error",
    "connection_timeout",
)


def _read_all(sim, n_events: int) -> list[dict[str, str]]:
    """Frames of one stream until n events and a heartbeat were seen."""
    frames: list[dict[str, str]] = []
    buf = b""
    with (
        httpx.Client(timeout=20) as client,
        client.stream(
            "GET", sim.events_url, params=ALL, headers={"Authorization": f"Bearer {sim.mint_token()}"}
        ) as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_bytes():
            buf += chunk
            head, sep, buf = buf.rpartition(b"\n\n")
            if not sep:
                buf = head + buf
                continue
            frames.extend(parse_frames(head + sep))
            n = sum(1 for f in frames if f.get("event") not in (None, "offset-only", "error"))
            if n >= n_events and (frames[-1].get("event") in ("offset-only", "error")):
                break
    return [f for f in frames if "event" in f]


@pytest.fixture(scope="module")
def emitted() -> dict[str, list[dict[str, str]]]:
    """Frames from three simulators (spec names/16 chars, live names/22 chars, faults), read once."""
    out: dict[str, list[dict[str, str]]] = {}
    with running_simulator(seed=21, backlog=2500, heartbeat=0.2) as sim:
        out["spec"] = _read_all(sim, 2500)
    with running_simulator(seed=22, backlog=800, heartbeat=0.2, id_length=22, real_names=True) as sim:
        out["live"] = _read_all(sim, 800)
    errors: list[dict[str, str]] = []
    malformed: dict[str, dict[str, str]] = {}
    with running_simulator(seed=23, backlog=3, heartbeat=5) as sim:
        for code in ERROR_CODES:
            sim.faults(stream_error=code, fault_after=2)
            errors.extend(f for f in _read_all(sim, 2) if f["event"] == "error")
        for kind in ("bad_json", "unknown_kind", "bad_envelope"):
            # one event, the malformed message, then an error that ends the stream
            sim.faults(malformed=kind, stream_error="timeout", fault_after=1)
            frames = _read_all(sim, 2)
            malformed[kind] = frames[1]
    out["errors"] = errors
    out["malformed"] = list(malformed.values())
    return out


def test_the_sample_is_broad(emitted):
    types = {f["event"] for f in emitted["spec"]}
    assert len(types - {"offset-only"}) == 22 and "offset-only" in types
    assert {orjson.loads(f["data"])["error"]["code"] for f in emitted["errors"]} == set(ERROR_CODES)


def test_every_emitted_message_validates(emitted):
    for name in ("spec", "live", "errors"):
        for frame in emitted[name]:
            message = decode_frame(frame["event"], frame["data"])
            if isinstance(message, EventMessage):
                assert message.offset == frame["id"] and message.event.type.value == frame["event"]
                if name == "live":
                    assert len(message.event.id) == 26 and len(message.event.xstream) == 26
            elif isinstance(message, OffsetOnlyMessage):
                assert message.offset == frame["id"]
            else:
                assert isinstance(message, ErrorMessage) and message.error.known_code is not None


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_emitted_event_validates(emitted, data):
    frame = data.draw(
        st.sampled_from([f for f in emitted["spec"] + emitted["live"] if f["event"] != "offset-only"])
    )
    message = decode_frame(frame["event"], frame["data"])
    assert isinstance(message, EventMessage)


# (field named in the rejection, mutation of the parsed `data` JSON)
Mutation = tuple[str, Callable[[dict[str, Any], Any], None]]
MUTATIONS: list[Mutation] = [
    ("event.id", lambda m, x: m["event"].__setitem__("id", "evt_short")),
    ("event.id", lambda m, x: m["event"].__setitem__("id", "xyz_" + m["event"]["id"][4:])),
    ("event.id", lambda m, x: m["event"].__setitem__("id", m["event"]["id"] + "!")),
    ("event.id", lambda m, x: m["event"].pop("id")),
    ("event.time", lambda m, x: m["event"].__setitem__("time", "yesterday")),
    ("event.time", lambda m, x: m["event"].__setitem__("time", "2025-02-02T17:56:01")),  # no zone
    ("event.specversion", lambda m, x: m["event"].pop("specversion")),
    ("event.source", lambda m, x: m["event"].__setitem__("source", "http://not-a-urn")),
    ("event.data", lambda m, x: m["event"].__setitem__("data", ["not", "an", "object"])),
    ("event", lambda m, x: m["event"].__setitem__("unexpected_" + x, True)),  # closed object
    ("event", lambda m, x: m.pop("event")),
    ("offset", lambda m, x: m.__setitem__("offset", "")),
    ("offset", lambda m, x: m.__setitem__("offset", "A" * 1025)),
    ("offset", lambda m, x: m.pop("offset")),
    ("event.type", lambda m, x: m["event"].__setitem__("type", "user.exploded")),
    (
        "event.type",
        lambda m, x: m["event"].__setitem__(
            "type", "group.created" if m["event"]["type"] != "group.created" else "user.created"
        ),
    ),
]
TENANT_MUTATIONS = ["A-Upper", "ab", "-leading", "trailing-", "x" * 64, "has space", ""]
STREAM_MUTATIONS = ["est_short", "evt_" + "a" * 16, "est_" + "a" * 17, "est_" + "!" * 16]


def _rejects(frame: dict[str, str], mutate: Callable[[dict[str, Any]], None], field: str) -> None:
    message = orjson.loads(frame["data"])
    mutate(message)
    with pytest.raises(MessageRejected) as info:
        decode_frame(frame["event"], orjson.dumps(message))
    assert field in info.value.reason, info.value.reason


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), suffix=st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8))
def test_mutations_are_rejected_with_the_field_named(emitted, data, suffix):
    frame = data.draw(
        st.sampled_from([f for f in emitted["spec"] + emitted["live"] if f["event"] != "offset-only"])
    )
    field, mutation = data.draw(st.sampled_from(MUTATIONS))
    _rejects(frame, lambda m: mutation(m, suffix), field)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_extension_attribute_mutations_are_rejected(emitted, data):
    frame = data.draw(
        st.sampled_from([f for f in emitted["spec"] + emitted["live"] if f["event"] != "offset-only"])
    )
    env_keys = orjson.loads(frame["data"])["event"]
    tenant_key = "a0tenant" if "a0tenant" in env_keys else "xtenant"
    stream_key = "a0stream" if "a0stream" in env_keys else "xstream"
    if data.draw(st.booleans()):
        bad = data.draw(st.sampled_from(TENANT_MUTATIONS))
        _rejects(frame, lambda m: m["event"].__setitem__(tenant_key, bad), tenant_key)
    else:
        bad = data.draw(st.sampled_from(STREAM_MUTATIONS))
        _rejects(frame, lambda m: m["event"].__setitem__(stream_key, bad), stream_key)


def test_heartbeat_and_error_mutations_are_rejected(emitted):
    beat = next(f for f in emitted["spec"] if f["event"] == "offset-only")
    _rejects(beat, lambda m: m.__setitem__("extra", 1), "extra")
    _rejects(beat, lambda m: m.pop("offset"), "offset")
    err = emitted["errors"][0]
    _rejects(err, lambda m: m["error"].pop("code"), "error.code")
    _rejects(err, lambda m: m.pop("error"), "error")


def test_the_simulators_malformed_messages_are_rejected_naming_the_field(emitted):
    bad_json, unknown_kind, bad_envelope = emitted["malformed"]
    for frame, field in ((bad_json, "data"), (unknown_kind, "type"), (bad_envelope, "event.id")):
        with pytest.raises(MessageRejected) as info:
            decode_frame(frame["event"], frame["data"])
        assert field in info.value.reason
        if frame is not bad_json:
            assert info.value.offset == frame["id"], "the offset survives so the client can move on"
    assert copy.deepcopy(bad_envelope) == bad_envelope


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    types=st.none()
    | st.lists(st.sampled_from(sorted(EVENT_TYPE_NAMES)), min_size=1, max_size=4, unique=True),
    id_length=st.sampled_from([16, 22]),
    real_names=st.booleans(),
)
def test_generated_events_validate_for_any_seed_and_type_request(seed, types, id_length, real_names):
    """The frames the server sends, built in-process for many seeds and `emit(types=...)` requests."""
    config = SimulatorConfig(seed=seed, id_length=id_length, real_names=real_names)
    store = SimStore(None)
    try:
        log = EventLog(config, store)
        Activity(config, log).emit(60, tuple(types) if types else None)
        for raw in log.frames:
            frame = parse_frames(raw)[0]
            message = decode_frame(frame["event"], frame["data"])
            assert isinstance(message, EventMessage) and message.offset == frame["id"]
            if types:
                assert message.type.value in types
    finally:
        store.close()
