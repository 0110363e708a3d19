"""Closing a hub connection is bounded: nats-py waits for its socket to finish closing, and a socket lost while
the client reconnects may never do so (a `stream --hub` that had stopped and printed its summary hung at exit)."""

from __future__ import annotations

import asyncio
import time

import pytest

from tenant_events.hub import connection


class _Transport:
    closed = False

    def close(self) -> None:
        self.closed = True


class _StuckClient:
    """What nats-py does in that case: close() waits for a transport that never finishes closing."""

    def __init__(self) -> None:
        self._transport = _Transport()

    async def close(self) -> None:
        await asyncio.Event().wait()


def test_a_close_that_never_finishes_gives_up_and_closes_the_socket(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(connection, "CLOSE_WITHIN_S", 0.2)
    client = _StuckClient()
    started = time.monotonic()
    asyncio.run(connection.close_connection(client))  # type: ignore[arg-type]
    assert time.monotonic() - started < 2
    assert client._transport.closed
