"""How a refused batch is logged: a refusal that is part of normal operation (a relay's lease lapsed while the
hub was out of reach) is news at INFO, anything else the store refuses is an ERROR; the follower learns of both
the same way (the failure is raised to it)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging

import pytest

from tenant_events.errors import StorageError
from tenant_events.hub.publisher import LeaseLost
from tenant_events.store.records import Batch, CommitResult
from tenant_events.stream.batching import BatchKeeper
from tenant_events.values.stream_states import EngineStats


class Refusing:
    """A sink that refuses every batch with `error` (the hub's publisher refuses so once its lease lapsed)."""

    def __init__(self, error: StorageError) -> None:
        self.error = error

    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        future: concurrent.futures.Future[CommitResult] = concurrent.futures.Future()
        future.set_exception(self.error)
        return future


@pytest.mark.parametrize(
    ("error", "level"),
    [
        (LeaseLost("this collector's lease lapsed", "another collector takes over"), logging.INFO),
        (StorageError("database or disk is full", "free some space"), logging.ERROR),
    ],
    ids=["lease-lapsed", "disk-full"],
)
def test_a_refused_batch_is_raised_and_logged_at_its_level(
    error: StorageError, level: int, caplog: pytest.LogCaptureFixture
) -> None:
    keeper = BatchKeeper(Refusing(error), EngineStats(), [], name="acme", max_events=10, max_delay=1.0)  # type: ignore[arg-type]

    async def go() -> None:
        keeper.move_cursor("42")
        with pytest.raises(StorageError) as raised:
            await keeper.drain()
        assert raised.value is error

    with caplog.at_level(logging.INFO, logger="tenant_events.stream.batching"):
        asyncio.run(go())
    said = [r for r in caplog.records if "could not store a batch" in r.getMessage()]
    assert [r.levelno for r in said] == [level]
