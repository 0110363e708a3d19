"""No reconnect storm, whatever a server answers or the caller configures: real hostile servers on 127.0.0.1
count the connections the real engine makes in a bounded time.

Before: a server that sent one message and hung up got 5,090 requests in 10 s; a 429 with `Retry-After: 0`,
a negative or a NaN one about 3,650 in 5 s; `Retry-After: inf` crashed the backoff; a stall timeout of 0 or
less made 11,632 connections in 5 s. Now attempts start at least half a second apart, a connection that ends
at once meets a growing wait, and every delay is a finite number in a sane range.
"""

from __future__ import annotations

import math
import time

import pytest

from helpers.events_factory import frame
from helpers.fixtures_engine import follow
from helpers.fixtures_proving import http_response, raw_server
from tenant_events.stream.backoff import Backoff, bounded
from tenant_events.stream.outcomes import Outcome, Reason, Reconnects, rate_limited
from tenant_events.stream.states import StreamState

TOKEN = "hostile-test-token"


class _Target:
    """What `follow()` needs of a tenant: its base URL and a token."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def mint_token(self) -> str:
        return TOKEN


def _for(seconds: float):
    started = time.monotonic()
    return lambda _rec: time.monotonic() - started >= seconds


def _one_message() -> bytes:
    name, data = frame(1, eid="evt_0000000000000001")
    body = f"event: {name}\ndata: {data}\n\n".encode()
    return http_response("200 OK", {"Content-Type": "text/event-stream"}, body)


def test_a_server_that_sends_one_message_and_hangs_up_meets_a_growing_wait(tmp_path):
    with raw_server("127.0.0.1", _one_message()) as server:
        rec = follow(_Target(server.url), tmp_path / "one.sqlite3", until=_for(10.0), timeout=40)
        requests = len(server.requests)
    # A floor alone (0.5 s) would allow 20; the wait grows after each short-lived connection.
    assert 2 <= requests <= 12, requests
    assert rec.stored == 1  # the one event, kept once however often it came
    assert not any(s.reason == Reason.INTERNAL_ERROR for s in rec.states)


@pytest.mark.parametrize("retry_after", ["0", "-5", "nan", "inf", "-inf", "1e999", "NaN"])
def test_a_429_that_says_retry_now_or_nonsense_is_not_hammered(tmp_path, retry_after):
    refusal = http_response(
        "429 Too Many Requests", {"Retry-After": retry_after, "Content-Type": "text/plain"}
    )
    with raw_server("127.0.0.1", refusal) as server:
        rec = follow(_Target(server.url), tmp_path / "rl.sqlite3", until=_for(5.0), timeout=30)
        requests = len(server.requests)
    assert 1 <= requests <= 6, (retry_after, requests)
    limited = [s for s in rec.states if s.reason == Reason.RATE_LIMITED]
    assert limited and all(s.state is StreamState.RATE_LIMITED for s in limited)
    assert all(s.retry_at is not None and math.isfinite(s.retry_at) for s in limited)
    assert not any(s.reason == Reason.INTERNAL_ERROR for s in rec.states), [s.message for s in rec.states]


@pytest.mark.parametrize("stall", [0.0, -1.0, math.nan, -math.inf])
def test_a_stall_timeout_of_nothing_does_not_storm(tmp_path, stall):
    with raw_server("127.0.0.1", None) as server:  # accepts and never answers: every connection stalls
        rec = follow(
            _Target(server.url), tmp_path / "st.sqlite3", stall_timeout=stall, until=_for(5.0), timeout=30
        )
        connections = len(server.held)
    attempts = sum(1 for s in rec.states if s.reason == Reason.CONNECTING)
    # Each attempt waits the least stall timeout (0.5 s) and then a growing backoff, never 0.
    assert 1 <= attempts <= 11 and connections <= attempts, (stall, attempts, connections)
    assert not any(s.reason == Reason.INTERNAL_ERROR for s in rec.states)


def test_a_refusal_that_lasts_keeps_attempts_apart_even_with_a_zero_backoff(tmp_path):
    """The backoff options through the API (0, NaN) cannot remove the floor between attempts either."""
    refusal = http_response("503 Service Unavailable", {"Content-Type": "text/plain"}, b"down")
    with raw_server("127.0.0.1", refusal) as server:
        follow(
            _Target(server.url),
            tmp_path / "z.sqlite3",
            backoff_base=0.0,
            backoff_cap=math.nan,
            min_interval=0.0,
            until=_for(5.0),
            timeout=30,
        )
        requests = len(server.requests)
    # The floor an API caller can lower to 0.05 s at the least; the backoff still grows from there.
    assert 1 <= requests <= 30, requests


def test_every_wait_is_finite_and_bounded_whatever_it_is_given():
    for value in (math.nan, math.inf, -math.inf, -1.0, 0.0, 1e308):
        assert 0.0 <= bounded(value, default=5.0, low=0.0, high=60.0) <= 60.0
    backoff = Backoff(base=math.nan, cap=math.inf)
    delays = [backoff.next_delay() for _ in range(40)]
    assert all(math.isfinite(d) and 0 <= d <= 3600 for d in delays)
    backoff.floor = math.inf  # a hostile `retry:` cannot stretch a wait past the cap
    assert backoff.next_delay() <= backoff.cap
    for until in (math.nan, math.inf, -math.inf, time.time() - 10, time.time() + 1e12):
        wait = rate_limited(until).delay
        assert 1.0 <= wait <= 3600.0, (until, wait)


def test_a_short_lived_connection_never_resets_the_backoff_but_a_lasting_one_does():
    reconnects = Reconnects(Backoff(base=1.0, cap=64.0))
    rotated = Outcome(StreamState.CONNECTING, "rotated", Reason.ROTATION, 0.0, progress=True)
    for _ in range(5):
        reconnects.ended(rotated, lived=0.01)
        assert reconnects.delay(rotated, lived=0.01) >= 0.0
    assert reconnects.backoff.attempt == 5  # each quick end grew it; none reset it
    reconnects.ended(rotated, lived=reconnects.steady_after + 1)
    assert reconnects.backoff.attempt == 0
    assert reconnects.delay(rotated, lived=reconnects.steady_after + 1) == 0.0  # a routine rotation: at once
