"""Every engine branch (docs/event-stream.md "Errors") driven through the real simulator's fault knobs; state + message asserted.

Each test runs the real engine (httpx + httpx-sse over TCP) into a real SQLite file and checks what a user
would see (the state and its message) and what was kept (every event once, in order; cursor; gaps; rejects).
"""

from __future__ import annotations

import re

import pytest

from helpers.fixtures_engine import OLD, follow, reference_ids, stored_ids
from tenant_events.errors import SignInBusy, SignInRequired
from tenant_events.store import EventReader
from tenant_events.values.stream_states import StreamState, state_line

QUIET = {"rate": 0, "burst_every": 0}  # no live traffic unless a test emits it


def ended(rec) -> bool:
    return bool(rec.states) and rec.states[-1].state.terminal


def test_backlog_is_caught_up_then_live_and_every_event_is_stored_once_in_order(make_simulator, db_path):
    sim = make_simulator(backlog=3000, heartbeat=0.2, **QUIET)
    rec = follow(
        sim,
        db_path,
        from_timestamp=OLD,
        until=lambda r: r.stored >= 3000 and r.engine.state.state is StreamState.LIVE,
    )
    assert stored_ids(db_path) == reference_ids(sim, 3000)
    assert rec.reached(StreamState.CATCHING_UP) or rec.reached(StreamState.LIVE)
    with EventReader(db_path) as reader:
        assert reader.cursor().offset  # heartbeats keep moving it
        assert reader.count() == 3000


def test_heartbeats_through_a_backlog_leave_it_catching_up_until_the_backlog_ends(make_simulator, db_path):
    """The service sends its heartbeats at regular intervals, also through a backlog it is still sending: one
    batch filled since the last heartbeat means more is flowing, so the state says "catching up" once and "live"
    once after it (each heartbeat said "live" and the next full batch "catching up": 43 flips in a 1M backlog)."""
    sim = make_simulator(backlog=30_000, heartbeat=0.02, **QUIET)
    rec = follow(
        sim,
        db_path,
        from_timestamp=OLD,
        batch_max_events=500,
        until=lambda r: r.stored >= 30_000 and r.engine.state.state is StreamState.LIVE,
    )
    flow = [s.state for s in rec.states if s.state in (StreamState.CATCHING_UP, StreamState.LIVE)]
    start = flow.index(StreamState.CATCHING_UP)
    assert flow[start:] == [StreamState.CATCHING_UP, StreamState.LIVE], [s.value for s in flow]


def test_batches_are_bounded_by_bytes_as_well_as_events(make_simulator, db_path):
    """Memory: a batch (and so each of the batches in flight) holds at most ~batch_max_bytes of event text."""
    sim = make_simulator(backlog=600, heartbeat=0.2, **QUIET)
    rec = follow(sim, db_path, from_timestamp=OLD, batch_max_bytes=20_000, until=lambda r: r.stored >= 600)
    assert stored_ids(db_path) == reference_ids(sim, 600)
    with EventReader(db_path) as reader:
        sizes = [len(raw) for _e, raw in reader.export_iter()]
    biggest_batch = max(c.inserted for c in rec.commits)
    assert biggest_batch < 600 and biggest_batch <= 20_000 // min(sizes) + 1


def test_resume_from_stored_cursor_gets_only_new_events(make_simulator, db_path):
    sim = make_simulator(backlog=200, heartbeat=0.2, **QUIET)
    follow(sim, db_path, from_timestamp=OLD, until=lambda r: r.stored >= 200)
    sim.emit(50)
    rec = follow(sim, db_path, until=lambda r: r.stored >= 50)
    assert rec.stored == 50 and sum(c.duplicates for c in rec.commits) == 0
    assert stored_ids(db_path) == reference_ids(sim, 250)


def test_rotation_by_connection_timeout_reconnects_at_once_without_loss(make_simulator, db_path):
    sim = make_simulator(backlog=100, heartbeat=0.1, rotate_after=0.5, **QUIET)

    def emit_some(rec):
        if rec.stored >= 100 and rec.stored < 400 and len(rec.commits) % 3 == 0:
            sim.emit(20)

    rec = follow(
        sim,
        db_path,
        from_timestamp=OLD,
        during=emit_some,
        until=lambda r: r.reasons().count("rotation") >= 2 and r.stored >= 100,
    )
    rotation = rec.first("rotation")
    assert rotation.state is StreamState.CONNECTING and "rotated" in rotation.message
    total = len(stored_ids(db_path))
    assert stored_ids(db_path) == reference_ids(sim, total)


def test_network_drop_mid_frame_backs_off_then_resumes_without_loss(make_simulator, db_path):
    sim = make_simulator(backlog=500, heartbeat=0.2, **QUIET)
    sim.faults(drop_mid_frame=2, fault_after=100)
    rec = follow(sim, db_path, from_timestamp=OLD, backoff_base=0.05, until=lambda r: r.stored >= 500)
    lost = rec.first("network")
    assert lost.state is StreamState.RECONNECTING
    assert lost.retry_at is not None
    line = state_line(lost, now=lost.retry_at - 1)
    assert re.fullmatch(r"reconnecting in 1 s — (connection lost|network error).*", line), line
    assert stored_ids(db_path) == reference_ids(sim, 500)


def test_server_errors_back_off_with_jitter(make_simulator, db_path):
    sim = make_simulator(backlog=10, heartbeat=0.2, **QUIET)
    sim.faults(http_5xx=3, http_5xx_status=503)
    rec = follow(sim, db_path, from_timestamp=OLD, backoff_base=0.05, until=lambda r: r.stored >= 10)
    errors = [s for s in rec.states if s.reason == "server_error"]
    assert len(errors) == 3 and all(s.state is StreamState.RECONNECTING for s in errors)
    assert errors[0].message.startswith("server error 503")


def test_rate_limited_waits_until_the_reset_and_says_until_when(make_simulator, db_path):
    sim = make_simulator(backlog=10, heartbeat=0.2, **QUIET)
    sim.faults(http_429=1)
    rec = follow(sim, db_path, from_timestamp=OLD, until=lambda r: r.stored >= 10)
    limited = rec.first("rate_limited")
    assert limited.state is StreamState.RATE_LIMITED
    assert re.fullmatch(r"rate limited until \d\d:\d\d:\d\d", limited.message)
    assert limited.retry_at is not None


class _RefreshingTokens:
    """First token is rejected by the simulator; refresh() hands out a good one (or another bad one)."""

    def __init__(self, sim, good_after_refresh: bool):
        self.sim, self.good, self.refreshes = sim, good_after_refresh, 0

    async def access_token(self):
        return self.sim.mint_token(global_client=False)  # 401 "Client is not global."

    async def refresh(self):
        self.refreshes += 1
        return self.sim.mint_token() if self.good else self.sim.mint_token(global_client=False)


class _Refreshed(_RefreshingTokens):
    async def access_token(self):
        return self.sim.mint_token() if self.refreshes else await super().access_token()


def test_401_refreshes_once_then_streams(make_simulator, db_path):
    sim = make_simulator(backlog=5, heartbeat=0.2, **QUIET)
    tokens = _Refreshed(sim, good_after_refresh=True)
    rec = follow(sim, db_path, tokens=tokens, from_timestamp=OLD, until=lambda r: r.stored >= 5)
    assert (
        tokens.refreshes == 1 and rec.first("token_refreshed").message == "access token refreshed after 401"
    )


def test_second_401_means_signed_out(make_simulator, db_path):
    sim = make_simulator(backlog=5, heartbeat=0.2, **QUIET)
    tokens = _RefreshingTokens(sim, good_after_refresh=False)
    rec = follow(sim, db_path, tokens=tokens, until=ended)
    final = rec.states[-1]
    assert final.state is StreamState.SIGNED_OUT and "rejected the token twice" in final.message
    assert state_line(final).startswith("signed out — the tenant rejected the token twice")
    assert tokens.refreshes == 1


def test_refresh_that_needs_sign_in_means_signed_out(make_simulator, db_path):
    sim = make_simulator(**QUIET)

    class Gone(_RefreshingTokens):
        async def refresh(self):
            raise SignInRequired("signed out of demo: sign in again")

    rec = follow(sim, db_path, tokens=Gone(sim, False), until=ended)
    assert rec.states[-1].state is StreamState.SIGNED_OUT and "sign in again" in rec.states[-1].message
    assert (
        state_line(rec.states[-1]) == "signed out of demo: sign in again"
    )  # said once, not "signed out: signed out"


class _HeldUp(_Refreshed):
    """Another process holds the sign-in's refresh lock through the first two refreshes."""

    held = 2

    async def refresh(self):
        if self.held:
            self.held -= 1
            raise SignInBusy("demo", 120)
        return await super().refresh()


def test_a_refresh_held_up_by_another_process_waits_and_retries_not_signed_out(make_simulator, db_path):
    """After a 401, a refresh that found the sign-in lock held is a wait: no refresh was made, so the next 401
    asks for one again (not "rejected twice"), and the stream goes on once the refresh goes through."""
    sim = make_simulator(backlog=5, heartbeat=0.2, **QUIET)
    tokens = _HeldUp(sim, good_after_refresh=True)
    fast = {"backoff_base": 0.05, "backoff_cap": 0.1, "min_interval": 0.05}
    rec = follow(sim, db_path, tokens=tokens, from_timestamp=OLD, until=lambda r: r.stored >= 5, **fast)
    held = [s for s in rec.states if s.reason == "sign_in_busy"]
    assert [s.state for s in held] == [StreamState.RECONNECTING] * 2, rec.states
    waiting = "waiting for another Tenant Events process that is refreshing the sign-in of demo"
    assert held[0].message == waiting
    assert state_line(held[0]).endswith(waiting)
    assert not rec.reached(StreamState.SIGNED_OUT) and tokens.refreshes == 1


def test_403_missing_scope_stops_and_says_so(make_simulator, db_path):
    sim = make_simulator(**QUIET)
    rec = follow(
        sim,
        db_path,
        token=sim.mint_token(scope="openid profile"),
        until=ended,
    )
    final = rec.states[-1]
    assert final.state is StreamState.ERROR and final.reason == "missing_scope"
    assert "read:events" in final.message


def test_403_too_many_connections_backs_off_and_tells_to_close_others(make_simulator, db_path, tmp_path):
    sim = make_simulator(max_connections=1, heartbeat=0.2, backlog=3, **QUIET)
    import httpx

    hog = httpx.Client(timeout=httpx.Timeout(5.0, read=None))
    stream = hog.stream(
        "GET", sim.base_url + "/events", headers={"Authorization": f"Bearer {sim.mint_token()}"}
    )
    response = stream.__enter__()
    assert response.status_code == 200
    released = []

    def release(rec):
        if any(s.reason == "too_many_connections" for s in rec.states) and not released:
            stream.__exit__(None, None, None)
            hog.close()
            released.append(True)

    try:
        rec = follow(
            sim,
            db_path,
            from_timestamp=OLD,
            busy_backoff_base=0.5,
            during=release,
            until=lambda r: r.stored >= 3,
        )
    finally:
        if not released:
            stream.__exit__(None, None, None)
            hog.close()
    busy = rec.first("too_many_connections")
    assert (
        busy.state is StreamState.TOO_MANY_CONNECTIONS and "close other apps or CLI sessions" in busy.message
    )


def test_400_names_the_parameter_and_stops(make_simulator, db_path):
    sim = make_simulator(**QUIET)
    rec = follow(sim, db_path, event_types=("user.exploded",), until=ended)
    final = rec.states[-1]
    assert final.state is StreamState.ERROR and final.reason == "bad_request"
    assert "event_type" in final.message


def test_404_points_at_the_domain_or_base_url(make_simulator, db_path):
    sim = make_simulator(**QUIET)
    rec = follow(sim, db_path, base_url=sim.auth_url + "/api/v9", until=ended)
    final = rec.states[-1]
    assert final.state is StreamState.ERROR and final.reason == "not_found"
    assert "/api/v9/events" in final.message and "base URL" in final.message


@pytest.mark.parametrize("how", ["http_410", "in_stream"])
def test_expired_cursor_resumes_by_timestamp_with_a_gap_marker_and_no_duplicates(
    make_simulator, db_path, how
):
    sim = make_simulator(backlog=300, heartbeat=0.2, retention=200 if how == "http_410" else 0, **QUIET)
    follow(sim, db_path, from_timestamp=OLD, until=lambda r: r.stored >= 200)
    if how == "http_410":
        sim.emit(500)  # the stored cursor falls out of the simulator's 200-event retention → 410
    else:
        sim.emit(20)
        sim.faults(stream_error="cursor_expired", fault_after=5)
    rec = follow(
        sim,
        db_path,
        until=lambda r: (
            r.reasons().count("cursor_expired") >= 1
            and r.engine.state.state is StreamState.LIVE
            and r.stored > 0
        ),
    )
    expired = rec.first("cursor_expired")
    assert expired.state is StreamState.CONNECTING
    assert re.search(
        r"resuming from \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ — some events may be missing", expired.message
    )
    ids = stored_ids(db_path)
    assert len(ids) == len(set(ids))
    with EventReader(db_path) as reader:
        [gap] = reader.gaps()
        assert gap.reason.startswith("cursor expired") and len(gap.resumed_from or "") == 20


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize("kind", ["bad_json", "unknown_kind", "bad_envelope", "oversized"])
def test_malformed_messages_are_kept_counted_and_skipped(make_simulator, db_path, kind):
    sim = make_simulator(backlog=50, heartbeat=0.2, **QUIET)
    sim.faults(malformed=kind, fault_after=10)
    rec = follow(
        sim,
        db_path,
        from_timestamp=OLD,
        max_data_bytes=512 * 1024,
        until=lambda r: r.stored >= 50 and r.engine.stats.rejected >= 1,
    )
    assert rec.engine.stats.rejected == 1 and rec.engine.state.state is not StreamState.ERROR
    with EventReader(db_path) as reader:
        [rejected] = reader.rejected()
        assert rejected.reason and rejected.raw
        assert reader.count() == 50
    assert stored_ids(db_path) == reference_ids(sim, 50)


def test_stalled_stream_is_abandoned_and_reconnected(make_simulator, db_path):
    sim = make_simulator(backlog=20, heartbeat=0.1, **QUIET)
    sim.faults(stall=1)
    rec = follow(sim, db_path, from_timestamp=OLD, stall_timeout=0.6, until=lambda r: r.stored >= 20)
    stalled = rec.first("stalled")
    assert stalled.state is StreamState.RECONNECTING and "went quiet for 0.6 s" in stalled.message


def test_duplicates_from_the_server_are_dropped_and_counted(make_simulator, db_path):
    sim = make_simulator(backlog=400, heartbeat=0.2, **QUIET)
    sim.faults(duplicate_every=10)
    rec = follow(sim, db_path, from_timestamp=OLD, until=lambda r: r.stored >= 400)
    assert rec.engine.stats.duplicates_dropped >= 30
    ids = stored_ids(db_path)
    assert len(ids) == len(set(ids)) == 400


def test_pause_resume_and_nudge(make_simulator, db_path):
    sim = make_simulator(backlog=10, heartbeat=0.2, **QUIET)
    steps: list[str] = []

    def drive(rec):
        engine = rec.engine
        if not steps and rec.stored >= 10:
            engine.pause()
            steps.append("paused")
        elif steps == ["paused"] and engine.state.state is StreamState.PAUSED:
            sim.emit(5)
            engine.resume()
            steps.append("resumed")
        elif steps == ["paused", "resumed"] and rec.stored >= 15:
            engine.nudge()
            sim.emit(5)
            steps.append("nudged")

    rec = follow(sim, db_path, from_timestamp=OLD, during=drive, until=lambda r: r.stored >= 20)
    assert rec.first("paused").state is StreamState.PAUSED
    assert stored_ids(db_path) == reference_ids(sim, 20)


def test_two_engines_side_by_side(make_simulator, tmp_path):
    import asyncio

    from tenant_events.store import StoreWriter
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    sims = [make_simulator(backlog=300 + i * 100, heartbeat=0.2, seed=i + 5, **QUIET) for i in range(2)]

    async def both():
        writers = [StoreWriter(tmp_path / f"t{i}.sqlite3") for i in range(2)]
        engines = [
            StreamEngine(
                EngineConfig(s.base_url, from_timestamp=OLD, name=f"t{i}"),
                StaticTokenProvider(s.mint_token()),
                w,
            )
            for i, (s, w) in enumerate(zip(sims, writers, strict=True))
        ]
        tasks = [asyncio.create_task(e.run()) for e in engines]
        for _ in range(500):
            if engines[0].stats.events_stored >= 300 and engines[1].stats.events_stored >= 400:
                break
            await asyncio.sleep(0.02)
        for e in engines:
            e.stop()
        await asyncio.gather(*tasks)
        for w in writers:
            w.close()

    asyncio.run(both())
    assert len(stored_ids(tmp_path / "t0.sqlite3")) == 300
    assert len(stored_ids(tmp_path / "t1.sqlite3")) == 400
