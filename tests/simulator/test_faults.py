"""Fault knobs, observed from the client side of a real connection."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest

from simulator.sse import events, parse_frames, read_frames, until_events

ALL = {"from_timestamp": "2000-01-01T00:00:00Z"}


def raw_stream(sim, *, params=ALL, read_timeout=10.0, max_bytes=10_000_000):
    """Everything the server sends until it closes (or max_bytes); (bytes, exception or None)."""
    buf = b""
    timeout = httpx.Timeout(10.0, read=read_timeout)
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream(
                "GET", sim.events_url, params=params, headers={"Authorization": f"Bearer {sim.mint_token()}"}
            ) as response,
        ):
            assert response.status_code == 200
            for chunk in response.iter_raw():
                buf += chunk
                if len(buf) >= max_bytes:
                    break
    except httpx.HTTPError as exc:
        return buf, exc
    return buf, None


def test_drop_mid_frame_aborts_the_connection(make_simulator):
    sim = make_simulator(backlog=10)
    sim.faults(drop_mid_frame=1, fault_after=3)
    buf, error = raw_stream(sim)
    assert isinstance(error, httpx.RemoteProtocolError), error
    complete, _, tail = buf.rpartition(b"\n\n")
    assert len(events(parse_frames(complete))) == 3 and tail.startswith(b"event: ")
    # one-shot: the next connection is healthy
    sim.faults(stream_error="timeout", fault_after=10)
    buf, error = raw_stream(sim)
    assert error is None and len(events(parse_frames(buf))) == 10


def test_stall_sends_headers_then_nothing(make_simulator):
    sim = make_simulator(backlog=5, heartbeat=0.2)
    sim.faults(stall=1)
    start = time.monotonic()
    buf, error = raw_stream(sim, read_timeout=0.8)
    assert isinstance(error, httpx.ReadTimeout)
    assert buf.startswith(b":connected") and b"event:" not in buf and time.monotonic() - start < 10


@pytest.mark.parametrize(
    "code",
    [
        "invalid_cursor",
        "cursor_expired",
        "timeout",
        "payload_too_large",
        "processing_error",
        "connection_timeout",
    ],
)
def test_each_in_stream_error_code_ends_the_stream(make_simulator, code):
    sim = make_simulator(backlog=6)
    sim.faults(stream_error=code, fault_after=4)
    buf, error = raw_stream(sim)
    assert error is None, "the stream closes cleanly after the error message"
    frames = parse_frames(buf)
    got = events(frames)
    assert len(got) == 4
    last = frames[-1]
    assert last["event"] == "error"
    detail = orjson.loads(last["data"])["error"]
    assert detail["code"] == code and detail["message"]
    assert detail["offset"] == got[-1]["offset"] == last["id"], "resume point = last delivered event"


def test_slow_drip_still_delivers_whole_frames(make_simulator):
    sim = make_simulator(backlog=3)
    sim.faults(slow_drip=0.05)
    with httpx.Client(timeout=10) as client:
        _r, frames = read_frames(
            client, sim.events_url, token=sim.mint_token(), params=ALL, until=until_events(3)
        )
    assert len(events(frames)) == 3


def test_duplicates_resend_earlier_events_with_the_same_id(make_simulator):
    sim = make_simulator(backlog=12)
    sim.faults(duplicate_every=4)
    with httpx.Client(timeout=10) as client:
        _r, frames = read_frames(
            client,
            sim.events_url,
            token=sim.mint_token(),
            params=ALL,
            until=lambda fs: len({e["event"]["id"] for e in events(fs)}) >= 12,
        )
    got = events(frames)
    ids = [e["event"]["id"] for e in got]
    assert len(ids) > len(set(ids)) == 12
    first = {}
    for e in got:
        first.setdefault(e["event"]["id"], e)
        assert e == first[e["event"]["id"]], "a duplicate is byte-for-byte the same message"


@pytest.mark.parametrize("kind", ["bad_json", "unknown_kind", "bad_envelope", "oversized"])
def test_malformed_message_then_the_stream_goes_on(make_simulator, kind):
    sim = make_simulator(backlog=4)
    sim.faults(malformed=kind, fault_after=2, oversized_bytes=300_000)
    with httpx.Client(timeout=10) as client:
        _r, frames = read_frames(
            client, sim.events_url, token=sim.mint_token(), params=ALL, until=lambda fs: len(fs) >= 6
        )
    good = [
        f
        for f in frames[1:]
        if f["data"].startswith('{"offset"')
        and '"specversion"' in f["data"]
        and '"evt_short"' not in f["data"]
    ]
    bad = frames[3]
    assert len(good) == 4
    assert bad["id"] == good[1]["id"], "the bad message carries the last good position"
    if kind == "bad_json":
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(bad["data"])
    elif kind == "unknown_kind":
        assert bad["event"] == "user.exploded"
    elif kind == "bad_envelope":
        env = orjson.loads(bad["data"])["event"]
        assert env["id"] == "evt_short" and env["unexpected"] is True
    else:
        assert len(bad["data"]) > 300_000


def test_fault_knobs_are_validated(simulator):
    for knobs in (
        {"stream_error": "nope"},
        {"malformed": "weird"},
        {"http_429": -1},
        {"no_such_knob": 1},
        {"id_token_alg": "none"},
    ):
        with pytest.raises(ValueError, match="400"):
            simulator.faults(**knobs)
    assert simulator.faults()["http_429"] == 0


def test_a_client_gone_mid_batch_is_noticed_without_writes_to_its_dead_socket(make_simulator):
    """A relay killed while the simulator sends it a backlog frame by frame (a fault knob on): the server notices
    the reset and stops; asyncio never reports writes to the failed socket (a WARNING the test would fail on)."""
    import socket
    import struct
    from urllib.parse import urlsplit

    from helpers.slack import bound

    sim = make_simulator(backlog=20_000)
    sim.faults(duplicate_every=9)
    url = urlsplit(sim.events_url)
    for _ in range(3):
        sock = socket.create_connection((url.hostname, url.port))
        sock.sendall(
            f"GET {url.path}?from_timestamp=2000-01-01T00:00:00Z HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {sim.mint_token()}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset, as a killed process's socket gives
        deadline = time.monotonic() + bound(10)
        while sim.stats()["connections"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sim.stats()["connections"] == 0
