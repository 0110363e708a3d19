"""A stop ends a follower even when its read loses the cancellation, and loses none of its batches.

On Python 3.11 `asyncio.wait_for` returns the inner result when a cancellation arrives in the same turn of the
loop as that result, and the cancellation is gone. The hub client waits for every message that way, and while
idle a hub viewer is handed a heartbeat each second: a `stream --hub` whose stop (SIGTERM) met a heartbeat went
on reading for good, its threads idle. The follower here reads the same way, from a queue a heartbeat task
fills, and its stop is made to arrive with a heartbeat, each round."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from helpers.events_factory import row
from tenant_events.store import EventReader, StoreWriter
from tenant_events.store.records import CursorState
from tenant_events.stream.backoff import Backoff
from tenant_events.stream.batching import IN_FLIGHT, BatchKeeper
from tenant_events.stream.follow_loop import CANCEL_AGAIN_S, FollowLoop
from tenant_events.stream.outcomes import Outcome, Reconnects
from tenant_events.values.stream_states import EngineStats, StreamState

HEARTBEAT_S = 0.05
ROUNDS = 3


class _Heartbeats(FollowLoop):
    """Reads messages as the hub viewer does (nats-py's `next_msg`: a `wait_for` on a queue); never ends an
    attempt by itself while heartbeats come."""

    def __init__(self, writer: StoreWriter) -> None:
        super().__init__("t", writer, Reconnects(Backoff()), max_events=10, max_delay=0.1)
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.read = 0

    def _connecting_text(self) -> str:
        return "connecting"

    def _resume_from(self, stored: CursorState) -> None:
        pass

    async def _attempt(self) -> Outcome:
        while True:
            await asyncio.wait_for(self.inbox.get(), 5.0)
            self.read += 1


def test_a_stop_that_meets_a_heartbeat_still_stops_the_follower(tmp_path: Path):
    writer = StoreWriter(tmp_path / "t.sqlite3")

    async def one_round() -> None:
        follower = _Heartbeats(writer)
        running = asyncio.create_task(follower.run())
        stopping = asyncio.Event()

        async def heartbeats(stop_with: int) -> None:
            beat = 0
            while True:
                await asyncio.sleep(HEARTBEAT_S)
                beat += 1
                follower.inbox.put_nowait("heartbeat")
                if beat == stop_with:  # the stop in the turn the heartbeat is handed over in
                    asyncio.get_running_loop().call_soon(follower.stop)
                    stopping.set()

        beating = asyncio.create_task(heartbeats(stop_with=5))
        try:
            await stopping.wait()
            done, _ = await asyncio.wait({running}, timeout=CANCEL_AGAIN_S * 5)
            assert done, f"still reading {CANCEL_AGAIN_S * 5:g} s after the stop ({follower.read} heartbeats)"
            assert running.result().state is StreamState.STOPPED
        finally:
            beating.cancel()
            running.cancel()
            await asyncio.gather(beating, running, return_exceptions=True)

    try:
        for _ in range(ROUNDS):
            asyncio.run(one_round())
    finally:
        writer.close()


def test_a_stop_while_batches_wait_for_the_writer_loses_none_of_them(tmp_path: Path):
    """With the alert rules on, a commit often waits its turn behind an evaluation step on the writer thread. A
    stop (or pause, or nudge) that cancelled the follower while it waited for the oldest commit cancelled that
    commit: the writer skipped the batch and committed the ones queued behind it, whose cursor is past it — its
    events were never stored and never asked for again (a late hub viewer lacked 101 events in the middle)."""
    writer = StoreWriter(tmp_path / "t.sqlite3")
    gate = threading.Event()
    batches = IN_FLIGHT + 2
    try:

        async def scenario() -> None:
            keeper = BatchKeeper(writer, EngineStats(), [], name="t", max_events=10, max_delay=60.0)
            writer.run_alert_job(lambda _ledger: gate.wait(30))  # an evaluation step holds the writer thread
            waiting = asyncio.Event()

            async def follow() -> None:
                for n in range(batches):
                    keeper.add_event(row(n), position=f"off-{n:08d}")
                    if n == IN_FLIGHT - 1:
                        waiting.set()
                    await keeper.flush()  # the IN_FLIGHT-th waits for the oldest commit

            following = asyncio.create_task(follow())
            await waiting.wait()
            await asyncio.sleep(0.1)
            assert not following.done()
            following.cancel()  # the stop
            await asyncio.gather(following, return_exceptions=True)
            gate.set()
            await keeper.drain()

        asyncio.run(scenario())
        with EventReader(writer.path) as reader:
            stored = reader.count()
        assert stored == IN_FLIGHT, f"{stored} of the {IN_FLIGHT} batches handed to the writer were stored"
        assert writer.cursor_state().offset == f"off-{IN_FLIGHT - 1:08d}"
    finally:
        gate.set()
        writer.close()
