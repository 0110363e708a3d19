"""The simulator starts, serves a backlog over real HTTP and stops."""

from __future__ import annotations

import httpx

from simulator.sse import events, read_frames, until_events


def test_backlog_replay_from_the_start(make_simulator):
    sim = make_simulator(backlog=50)
    with httpx.Client(timeout=10) as client:
        first = sim.stats()["first_seq"]
        assert first == 1
        response, frames = read_frames(
            client,
            sim.events_url,
            token=sim.mint_token(),
            params={"from_timestamp": "2000-01-01T00:00:00Z"},
            until=until_events(50),
        )
    assert response.status_code == 200
    got = events(frames)
    assert len(got) == 50
    assert all(e["offset"] == e["id"] for e in got)
    assert got[-1]["offset"] == sim.latest_offset()
