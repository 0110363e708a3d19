"""Frames exactly as docs/event-stream.md "Frames" shows them, through decode_frame: the three kinds, both id
lengths, both extension prefixes."""

from __future__ import annotations

import json

import pytest

from tenant_events.wire import (
    ErrorMessage,
    EventMessage,
    EventType,
    MessageRejected,
    OffsetOnlyMessage,
    decode_frame,
)
from tenant_events.wire.messages import StreamErrorCode, encode_message


def envelope(**over):
    ev = {
        "specversion": "1.0",
        "type": "user.created",
        "source": "urn:tenant:acme.example.com",
        "id": "evt_6SfwXrtm8nVcjzzN",
        "time": "2025-02-02T17:56:01.573Z",
        "data": {
            "object": {
                "user_id": "auth0|1",
                "email": "a@example.com",
                "created_at": "x",
                "updated_at": "x",
                "identities": [],
            }
        },
        "xtenant": "acme",
        "xstream": "est_38ANnv8pQhqsZrX2",
    }
    ev.update(over)
    return {k: v for k, v in ev.items() if v is not None}


def frame(ev, offset="MTIzNDIzNDEzCg=="):
    return json.dumps({"offset": offset, "event": ev})


def test_event_message_spec_literal():
    msg = decode_frame("user.created", frame(envelope()))
    assert isinstance(msg, EventMessage)
    assert msg.type is EventType.USER_CREATED
    assert msg.offset == "MTIzNDIzNDEzCg=="
    assert msg.event.xtenant == "acme"
    assert msg.event.time.utcoffset().total_seconds() == 0
    assert not msg.event.is_test


def test_real_service_ids_and_prefixes_accepted():
    # docs/event-stream.md "Quirks": 22-character ids and a0-prefixed extensions are what the live service sends.
    ev = envelope(id="evt_6SfwXrtm8nVcjzzNCFFH1L", xstream=None, xtenant=None)
    ev.update({"a0tenant": "acme", "a0stream": "est_38ANnv8pQhqsZrX2VFbftv", "a0purpose": "test"})
    msg = decode_frame("user.created", frame(ev))
    assert isinstance(msg, EventMessage)
    assert msg.event.xstream == "est_38ANnv8pQhqsZrX2VFbftv"
    assert msg.event.is_test


def test_bare_source_accepted():
    msg = decode_frame("user.created", frame(envelope(source="urn:auth0:")))
    assert isinstance(msg, EventMessage)


def test_offset_only_and_error():
    hb = decode_frame("offset-only", '{"offset":"4LcuTXmVDASuNRQt"}')
    assert isinstance(hb, OffsetOnlyMessage) and hb.offset == "4LcuTXmVDASuNRQt"
    err = decode_frame("error", '{"error":{"code":"connection_timeout","message":"rotating","offset":"abc"}}')
    assert isinstance(err, ErrorMessage)
    assert err.error.known_code is StreamErrorCode.CONNECTION_TIMEOUT
    assert err.error.offset == "abc"
    unknown = decode_frame("error", '{"error":{"code":"brand_new","message":"?"}}')
    assert isinstance(unknown, ErrorMessage) and unknown.error.known_code is None


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        ({"id": "evt_short"}, "event.id"),
        ({"id": "evt_6SfwXrtm8nVcjzzN!"}, "event.id"),
        ({"id": "evt_" + "a" * 17}, "event.id"),
        ({"xstream": "est_x"}, "event.xstream"),
        ({"xtenant": "A-bad"}, "event.xtenant"),
        ({"xtenant": "ab"}, "event.xtenant"),
        ({"xtenant": "a" * 64}, "event.xtenant"),
        ({"xtenant": "-abc"}, "event.xtenant"),
        ({"time": "yesterday"}, "event.time"),
        ({"time": "2025-02-02T17:56:01"}, "event.time"),
        ({"source": "https://example.com"}, "event.source"),
        ({"data": "text"}, "event.data"),
        ({"type": "user.teleported"}, "event.type"),
        ({"specversion": None}, "event.specversion"),
        ({"surprise": 1}, "event.surprise"),
        ({"xpurpose": "Not Allowed!"}, "event.xpurpose"),
    ],
)
def test_envelope_mutations_rejected_with_field_named(mutation, field):
    with pytest.raises(MessageRejected) as info:
        decode_frame("user.created", frame(envelope(**mutation)))
    assert info.value.reason.startswith(field), info.value.reason
    assert info.value.offset == "MTIzNDIzNDEzCg=="  # kept so the cursor can move past it


def test_type_mismatch_between_message_and_envelope():
    with pytest.raises(MessageRejected, match="differs from the message type"):
        decode_frame("user.deleted", frame(envelope()))


@pytest.mark.parametrize(
    ("event", "data", "reason"),
    [
        ("user.created", "{not json", "data: not valid JSON"),
        ("user.created", "[1,2]", "data: expected a JSON object"),
        ("", '{"offset":"x"}', "event:"),
        ("user.teleported", '{"offset":"x"}', "type: unknown message kind"),
        ("offset-only", '{"offset":""}', "offset"),
        ("offset-only", json.dumps({"offset": "x" * 1025}), "offset"),
        ("offset-only", '{"offset":"x","extra":1}', "extra"),
        ("error", '{"error":{"message":"no code"}}', "error.code"),
        ("offset-only", '{"type":"error","offset":"x"}', "type: data says"),
        ("user.created", '{"offset":"x"}', "event: Field required"),
    ],
)
def test_malformed_frames_rejected(event, data, reason):
    with pytest.raises(MessageRejected) as info:
        decode_frame(event, data)
    assert reason in info.value.reason


def test_encode_round_trip():
    msg = decode_frame("user.created", frame(envelope()))
    dumped = encode_message(msg)
    assert dumped["type"] == "user.created"
    again = decode_frame(dumped.pop("type"), json.dumps(dumped))
    assert again == msg
