"""Catch-up batches grow while the sink is busy: a full batch queues behind the one the sink holds only once it is
GROW times the usual size (or at the byte cap), and goes as soon as the sink is free. The sink's fixed costs of a
transaction then spread over more events exactly when the sink is the slower side; live batches are untouched."""

from __future__ import annotations

import asyncio
import concurrent.futures

from helpers.events_factory import row
from tenant_events.store.records import Batch, CommitResult
from tenant_events.stream.batching import GROW, BatchKeeper
from tenant_events.values.stream_states import EngineStats


class Held:
    """A sink that keeps each batch until the test lets it be committed."""

    def __init__(self) -> None:
        self.batches: list[tuple[Batch, concurrent.futures.Future[CommitResult]]] = []

    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        future: concurrent.futures.Future[CommitResult] = concurrent.futures.Future()
        self.batches.append((batch, future))
        return future

    def commit_all(self) -> None:
        for batch, future in self.batches:
            if not future.done():
                future.set_result(CommitResult(len(batch.events), 0, 0, batch.cursor))


def test_a_full_batch_grows_while_the_sink_holds_one_and_goes_once_it_is_free() -> None:
    sink, size = Held(), 10
    keeper = BatchKeeper(
        sink, EngineStats(), [], name="acme", max_events=size, max_delay=60.0, max_bytes=1 << 20
    )  # type: ignore[arg-type]
    rows = iter(row(i) for i in range(10 * GROW * size))

    def add(n: int) -> None:
        for _ in range(n):
            r = next(rows)
            keeper.add_event(r, r.offset)

    async def go() -> None:
        add(size)
        assert keeper.full, "the sink holds nothing: a batch goes at the usual size"
        await keeper.flush()
        add(size)
        assert not keeper.full, "the sink still holds a batch: this one grows"
        add((GROW - 1) * size - 1)
        assert not keeper.full
        add(1)
        assert keeper.full, "grown GROW times: it queues behind the one held"
        await keeper.flush()
        sink.commit_all()
        await asyncio.sleep(0.01)  # the commits are heard of on the loop
        add(size)
        assert keeper.full, "the sink is free again: the usual size"
        await keeper.flush()
        sink.commit_all()
        await keeper.drain()
        assert [len(b.events) for b, _ in sink.batches] == [size, GROW * size, size]
        assert keeper.pending.events == []

    asyncio.run(go())


def test_the_byte_cap_holds_while_a_batch_grows() -> None:
    sink, size = Held(), 10
    one = row(0)
    keeper = BatchKeeper(
        sink,
        EngineStats(),
        [],
        name="acme",
        max_events=size,
        max_delay=60.0,
        max_bytes=3 * size * len(one.raw),
    )  # type: ignore[arg-type]

    async def go() -> None:
        keeper.move_cursor("0")
        await keeper.flush()  # the sink now holds a batch
        for i in range(GROW * size):
            r = row(i)
            keeper.add_event(r, r.offset)
            keeper.pending_bytes += len(r.raw)
            if keeper.full:
                break
        assert len(keeper.pending.events) <= 3 * size + 1 < GROW * size

    asyncio.run(go())
