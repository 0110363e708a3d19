"""State lines read as a person wrote them: each state's words said once ("stopped", not "stopped: stopped").

Checked on every state with the messages the engine gives it, on the states a real engine goes through against
the real simulator (rotation, 429, 5xx, a dropped connection, too many connections, pause, stop, 401, a missing
scope) and on the real CLI's stderr; tests/view/test_status.py checks the window's line while catching up.
"""

from __future__ import annotations

import itertools
import re
import signal
import time

import httpx

from helpers.fixtures_engine import OLD, cli, follow
from helpers.slack import bound
from tenant_events.values.stream_states import LABELS, StateChange, StreamState, state_line

QUIET = {"rate": 0, "burst_every": 0}
NOW = 1_800_000_000.0

# What the engine says with each state (stream/engine.py); `True`: it also waits before the next attempt.
MESSAGES: dict[StreamState, list[tuple[str, bool]]] = {
    StreamState.CONNECTING: [
        ("connecting to http://127.0.0.1:8080/api/v2", False),
        ("the server rotated the connection", False),
        ("access token refreshed after 401", False),
        (
            "the stored position expired; resuming from 2026-11-01T00:00:00Z — some events may be missing",
            False,
        ),
    ],
    StreamState.CATCHING_UP: [("connected", False), ("catching up on stored events", False)],
    StreamState.LIVE: [("connected", False), ("live", False)],
    StreamState.RECONNECTING: [
        ("network error: ConnectError: All connection attempts failed", True),
        ("connection lost: the server broke off mid-message (RemoteProtocolError)", True),
        ("the stream went quiet for 90 s (stalled)", False),
        ("server error 503: The service is temporarily unavailable.", True),
        ("the stream closed before sending anything", True),
        ("the server ended the stream (processing_error: boom)", True),
    ],
    StreamState.RATE_LIMITED: [("rate limited until 12:04:10", True)],
    StreamState.TOO_MANY_CONNECTIONS: [
        (
            "the tenant allows only a few event streams at once; if this lasts, close other apps or CLI sessions "
            "following it (Maximum concurrent event stream connections reached.)",
            True,
        ),
    ],
    StreamState.PAUSED: [
        ("paused", False),
        (
            "cannot write to /data/demo.sqlite3: database or disk is full — free disk space or check the data dir",
            True,
        ),
    ],
    StreamState.SIGNED_OUT: [
        ("signed out of demo: sign in again", False),
        ("the tenant rejected the token twice (Invalid token.)", False),
        (
            "the tenant rejected the access token (401) — get a new token and set TENANT_EVENTS_ACCESS_TOKEN again",
            False,
        ),
    ],
    StreamState.ERROR: [
        ("access denied: the token lacks the read:events scope (Insufficient scope.)", False),
        ("not found: http://127.0.0.1:8080/api/v9/events — check the tenant domain or base URL", False),
        ("the tenant's TLS certificate is not trusted (self-signed certificate)", False),
    ],
    StreamState.STOPPED: [("stopped", False), ("not started", False)],
}


def doubled(line: str) -> str | None:
    """What a line says twice: a word of a state's name, or any two-word phrase; None when nothing is."""
    # names stay whole: TENANT_EVENTS_ACCESS_TOKEN, tenant-events, read:events, URLs
    words = [w.strip(".:;,()") for w in re.findall(r"[\w\-./:]+", line.lower())]
    state_words = {w for label in LABELS.values() for w in label.split()} | {"retrying"}
    state_words -= {"is", "still", "another"}
    for word in state_words:
        if words.count(word) > 1:
            return word
    pairs = list(itertools.pairwise(words))
    for pair in pairs:
        if pairs.count(pair) > 1:
            return " ".join(pair)
    return None


def ended(rec) -> bool:
    return bool(rec.states) and rec.states[-1].state.terminal


def assert_said_once(lines: list[str]) -> None:
    bad = [(line, doubled(line)) for line in lines if doubled(line)]
    assert not bad, bad


def test_every_state_with_each_of_its_messages_is_said_once():
    assert set(MESSAGES) == set(StreamState)
    lines = []
    for state, messages in MESSAGES.items():
        for message, waits in messages:
            change = StateChange(state, message, "r", retry_at=NOW + 3.4 if waits else None)
            line = state_line(change, NOW)
            lines.append(line)
            assert line, (state, message)
            if waits and state is not StreamState.RATE_LIMITED:
                assert "in 3 s" in line, line  # the wait is said, once
    assert_said_once(lines)
    assert state_line(StateChange(StreamState.STOPPED, "stopped"), NOW) == "stopped"
    assert state_line(StateChange(StreamState.LIVE, "live"), NOW) == "live"
    busy = StateChange(StreamState.TOO_MANY_CONNECTIONS, "if this lasts, close other apps", retry_at=NOW + 3)
    assert (
        state_line(busy, NOW)
        == "another connection is still open — retrying in 3 s — if this lasts, close other apps"
    )


def test_the_states_of_a_real_engine_are_said_once(make_simulator, db_path):
    sim = make_simulator(backlog=400, heartbeat=0.1, rotate_after=0.6, **QUIET)
    sim.faults(http_429=1, http_5xx=1, drop_mid_frame=1, fault_after=50)
    paused_at: list[float] = []

    def pause_once(rec):
        if rec.stored >= 400 and not paused_at:
            paused_at.append(time.monotonic())
            rec.engine.pause()
        elif paused_at and len(paused_at) == 1 and time.monotonic() - paused_at[0] > 0.3:
            paused_at.append(time.monotonic())
            rec.engine.resume()

    rec = follow(
        sim,
        db_path,
        from_timestamp=OLD,
        backoff_base=0.05,
        during=pause_once,
        until=lambda r: len(paused_at) == 2 and r.reasons().count("rotation") >= 2,
    )
    states = list(rec.states)
    seen = {s.state for s in states}
    assert {
        StreamState.CONNECTING,
        StreamState.RECONNECTING,
        StreamState.RATE_LIMITED,
        StreamState.PAUSED,
        StreamState.STOPPED,
    } <= seen and seen & {StreamState.LIVE, StreamState.CATCHING_UP}, seen
    states += follow(sim, db_path, token=sim.mint_token(ttl=-60), until=ended).states
    states += follow(sim, db_path, token=sim.mint_token(scope="openid"), until=ended).states
    assert {StreamState.SIGNED_OUT, StreamState.ERROR} <= {s.state for s in states}
    assert_said_once([state_line(s, s.at) for s in states])


def test_too_many_connections_is_said_once(make_simulator, db_path):
    sim = make_simulator(max_connections=1, heartbeat=0.2, backlog=3, **QUIET)
    with (
        httpx.Client(timeout=httpx.Timeout(5.0, read=None)) as hog,
        hog.stream("GET", sim.events_url, headers={"Authorization": f"Bearer {sim.mint_token()}"}) as held,
    ):
        assert held.status_code == 200
        rec = follow(
            sim,
            db_path,
            from_timestamp=OLD,
            timeout=15,
            until=lambda r: r.reached(StreamState.TOO_MANY_CONNECTIONS),
        )
    busy = rec.first("too_many_connections")
    line = state_line(busy, busy.at)
    assert re.match(r"another connection is still open — retrying in \d+ s — ", line), line
    assert_said_once([line])


def test_the_cli_says_each_state_once(make_simulator, tmp_path):
    sim = make_simulator(backlog=200, heartbeat=0.1, rotate_after=0.5, **QUIET)
    proc = cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "said",
        "--data-dir",
        str(tmp_path),
        "--from-timestamp",
        OLD,
        env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()},
    )
    deadline = time.monotonic() + bound(60)
    while sim.stats()["connections_total"] < 4:  # a few rotations (one each 0.5 s)
        assert proc.poll() is None and time.monotonic() < deadline, "no rotations"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    lines = [  # state lines (the alert rules' lines are another test's business)
        line.removeprefix("tenant-events: ")
        for line in err.splitlines()
        if line.startswith("tenant-events: ") and not line.startswith("tenant-events: alert (")
    ]
    assert lines[0].startswith("connecting to http://127.0.0.1:"), lines
    assert "stopped" in lines and any(line.startswith(("live", "catching up")) for line in lines), lines
    assert_said_once(lines)
    expired = cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "said",
        "--data-dir",
        str(tmp_path),
        env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=-60)},
    )
    _, err = expired.communicate(timeout=30)
    assert expired.returncode == 4, err
    told = [
        line.removeprefix("tenant-events: ")
        for line in err.splitlines()
        if line.startswith("tenant-events: signed out")
    ]
    assert told, err
    assert_said_once(told)
