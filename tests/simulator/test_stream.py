"""The 200 stream: framing, cursors and their precedence, filters, heartbeats, keep-alives, rotation."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

import httpx
import orjson
import pytest

from simulator.sse import events, kinds, read_frames, until_events

EVENT_TYPES_22 = 22


def stream(sim, until, **kw):
    with httpx.Client(timeout=10) as client:
        response, frames = read_frames(client, sim.events_url, token=sim.mint_token(), until=until, **kw)
    assert response.status_code == 200
    return frames


def n_events(n):
    return until_events(n)


def test_framing_follows_event_stream_reference(make_simulator):
    sim = make_simulator(backlog=30)
    frames = stream(sim, n_events(30), params={"from_timestamp": "2000-01-01T00:00:00Z"})
    assert frames[0] == {":": "connected", "retry": "2000"}
    for frame in frames[1:31]:
        assert set(frame) == {"event", "id", "data"}
        data = orjson.loads(frame["data"])
        assert set(data) == {"offset", "event"}, "data carries no `type` (docs/event-stream.md 'Frames')"
        assert data["offset"] == frame["id"]
        env = data["event"]
        assert env["type"] == frame["event"]
        assert set(env) <= {
            "specversion",
            "type",
            "source",
            "id",
            "time",
            "data",
            "xtenant",
            "xstream",
            "xpurpose",
        }
        assert {"specversion", "type", "source", "id", "time", "data", "xtenant", "xstream"} <= set(env)
        assert re.fullmatch(r"evt_[a-zA-Z0-9]{16}", env["id"]) and re.fullmatch(
            r"est_[a-zA-Z0-9]{16}", env["xstream"]
        )
        assert re.fullmatch(r"[a-z0-9][-a-z0-9]{1,62}[a-z0-9]", env["xtenant"])
        assert env["source"].startswith("urn:") and env["specversion"] == "1.0"
        assert datetime.fromisoformat(env["time"].replace("Z", "+00:00")).tzinfo is not None
        assert "object" in env["data"]


def test_no_cursor_starts_from_now(make_simulator):
    sim = make_simulator(backlog=20)
    with httpx.Client(timeout=10) as client:
        token = sim.mint_token()
        with client.stream("GET", sim.events_url, headers={"Authorization": f"Bearer {token}"}) as r:
            it = r.iter_bytes()
            first = next(it)
            assert first.startswith(b":connected")
            sim.emit(3)
            buf = b""
            while buf.count(b"\nid: ") < 3:
                buf += next(it)
    offsets = re.findall(rb"\nid: (\S+)", buf)
    assert len(offsets) == 3 and offsets[-1].decode() == sim.latest_offset()


def test_from_resumes_after_the_given_offset_and_last_event_id_wins(make_simulator):
    sim = make_simulator(backlog=40)
    everything = events(stream(sim, n_events(40), params={"from_timestamp": "2000-01-01T00:00:00Z"}))
    tenth, twentieth = everything[9], everything[19]
    resumed = events(stream(sim, n_events(1), params={"from": tenth["offset"]}))
    assert resumed[0]["event"]["id"] == everything[10]["event"]["id"]
    both = events(
        stream(
            sim, n_events(1), params={"from": tenth["offset"]}, headers={"Last-Event-ID": twentieth["offset"]}
        )
    )
    assert both[0]["event"]["id"] == everything[20]["event"]["id"], "Last-Event-ID wins over from (§2)"
    replay = events(stream(sim, n_events(30), params={"from": tenth["offset"]}))
    assert [e["event"] for e in replay] == [e["event"] for e in everything[10:40]], "replays are identical"


def test_from_timestamp_starts_at_or_after(make_simulator):
    sim = make_simulator(backlog=200)
    everything = events(stream(sim, n_events(200), params={"from_timestamp": "2000-01-01T00:00:00Z"}))
    times = [datetime.fromisoformat(e["event"]["time"].replace("Z", "+00:00")) for e in everything]
    pivot = times[120].replace(microsecond=0)
    stamp = pivot.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    got = events(stream(sim, n_events(1), params={"from_timestamp": stamp}))
    first_index = next(i for i, t in enumerate(times) if t >= pivot)
    assert got[0]["event"]["id"] == everything[first_index]["event"]["id"]


def test_event_type_filter_is_repeatable(make_simulator):
    sim = make_simulator(backlog=400)
    wanted = {"user.created", "organization.member.added"}
    got = events(
        stream(
            sim,
            lambda fs: any(f.get("event") == "offset-only" for f in fs),
            params={"from_timestamp": "2000-01-01T00:00:00Z", "event_type": sorted(wanted)},
        )
    )
    assert got and {e["type"] for e in got} == wanted


def test_backlog_covers_all_22_types_and_marks_some_as_test(make_simulator):
    sim = make_simulator(backlog=3000)
    got = events(stream(sim, n_events(3000), params={"from_timestamp": "2000-01-01T00:00:00Z"}))
    assert len({e["type"] for e in got}) == EVENT_TYPES_22
    purposes = [e["event"].get("xpurpose") for e in got]
    assert set(purposes) == {None, "test"} and purposes.count("test") < len(got) / 20
    assert len({e["event"]["id"] for e in got}) == len(got)


def test_heartbeat_carries_the_latest_position(make_simulator):
    sim = make_simulator(backlog=5, heartbeat=0.3)
    start = time.monotonic()
    frames = stream(
        sim,
        lambda fs: kinds(fs).count("offset-only") >= 2,
        params={"event_type": "group.deleted", "from_timestamp": "2000-01-01T00:00:00Z"},
    )
    elapsed = time.monotonic() - start
    beats = [f for f in frames if f.get("event") == "offset-only"]
    assert all(orjson.loads(b["data"]) == {"offset": b["id"]} for b in beats)
    assert beats[-1]["id"] == sim.latest_offset(), "skipped (filtered) events still advance the cursor"
    assert 0.5 <= elapsed < 10  # two 0.3 s heartbeats; the bound only catches a missing heartbeat


def test_keepalive_comments_when_idle(make_simulator):
    sim = make_simulator(heartbeat=30, keepalive=0.2)
    frames = stream(sim, lambda fs: sum(1 for f in fs if f.get(":") == "keep-alive") >= 2)
    assert [f for f in frames if f.get(":") == "keep-alive"]


def test_rotation_sends_connection_timeout_with_offset_then_closes(make_simulator):
    sim = make_simulator(backlog=3, rotate_after=0.5)
    start = time.monotonic()
    frames = stream(sim, lambda fs: False)  # read until the server closes
    assert time.monotonic() - start < 10  # rotate_after=0.5, generous for a loaded CI machine
    last = frames[-1]
    assert last["event"] == "error" and last["id"] == sim.latest_offset()
    assert orjson.loads(last["data"])["error"]["code"] == "connection_timeout"
    assert orjson.loads(last["data"])["error"]["offset"] == last["id"]


def test_rotation_can_be_changed_for_the_next_connections(make_simulator):
    sim = make_simulator(backlog=3, rotate_after=300)
    assert sim.faults(rotate_after=0.5)["rotate_after"] == 0.5
    frames = stream(sim, lambda fs: False)  # the server ends this connection by itself, well before 300 s
    assert orjson.loads(frames[-1]["data"])["error"]["code"] == "connection_timeout"
    with pytest.raises(ValueError, match="rotate_after must be a number"):
        sim.faults(rotate_after=-1)


def test_live_events_flow_at_the_configured_rate(make_simulator):
    sim = make_simulator(rate=40, burst_every=0)
    start = time.monotonic()
    got = events(stream(sim, n_events(20)))
    assert len(got) >= 20 and time.monotonic() - start < 15


@pytest.mark.parametrize("id_length", [16, 22])
def test_id_length(make_simulator, id_length):
    sim = make_simulator(backlog=3, id_length=id_length)
    env = events(stream(sim, n_events(3), params={"from_timestamp": "2000-01-01T00:00:00Z"}))[0]["event"]
    assert len(env["id"]) == 4 + id_length and len(env["xstream"]) == 4 + id_length


def test_real_names_mode(make_simulator):
    sim = make_simulator(backlog=300, real_names=True)
    got = events(stream(sim, n_events(300), params={"from_timestamp": "2000-01-01T00:00:00Z"}))
    for e in got:
        env = e["event"]
        assert "a0tenant" in env and "a0stream" in env and "xtenant" not in env and "xstream" not in env
    assert any(e["event"].get("a0purpose") == "test" for e in got)


def test_emit_with_types(simulator):
    simulator.emit(5, types=["organization.group.role.deleted"])
    frames = stream(
        simulator,
        n_events(5),
        params={"from_timestamp": "2000-01-01T00:00:00Z", "event_type": "organization.group.role.deleted"},
    )
    assert len(events(frames)) == 5
