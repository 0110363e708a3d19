"""The set-up the team-bucket tests share (triage and silences on a real nats-server with the documented
permissions): hub options per user, the collector's provisioning, a board of a user, and bounded waits.

    def test_x(team_buckets):
        async def go():
            collector = await team_buckets.provisioned()
            nc, board = await team_buckets.board(SilenceBoard, "viewer")
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from helpers.nats_hub import NatsHub
from helpers.slack import bound
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames


class TeamBuckets:
    """A hub (one server) and the tenant `acme` on it."""

    def __init__(self, hub: NatsHub) -> None:
        self.hub = hub
        self.names = HubNames("acme")

    def options(self, user: str) -> HubOptions:
        return HubOptions(
            tuple(self.hub.urls.split(",")), HubAuth("password", user, getattr(self.hub.credentials, user))
        )

    async def provisioned(self) -> Any:
        """The collector's connection, after it made the stream and every bucket (as a relay does)."""
        collector = await connect(self.options("collector"), reconnect=False)
        await provision(collector.jetstream(), self.names, StreamPlan())
        return collector

    async def board(self, kind: Any, user: str) -> tuple[Any, Any]:
        """(connection, board) of `user`: a TriageBoard or SilenceBoard, watching."""
        nc = await connect(self.options(user), reconnect=False)
        board = await kind.open(nc.jetstream(timeout=2.0), self.names, self.options(user).auth)
        await board.start()
        return nc, board


async def until(check: Callable[[], object], limit: float = 5.0, what: str = "the condition") -> None:
    """Until `check()` holds, for at most `limit` seconds (stretched on a loaded machine)."""
    deadline = time.monotonic() + bound(limit)
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


@pytest.fixture
def team_buckets(nats_single: NatsHub) -> TeamBuckets:
    return TeamBuckets(nats_single)


async def raw_viewer(hub: NatsHub) -> tuple[Any, list[Exception]]:
    """A hostile client with the viewer's own credentials, writing to the buckets by hand: the connection, and the
    errors the server sends it (a refused publish arrives as a permissions violation)."""
    import nats

    errors: list[Exception] = []

    async def record(exc: Exception) -> None:
        errors.append(exc)

    raw = await nats.connect(
        hub.urls,
        user="viewer",
        password=hub.credentials.viewer,
        error_cb=record,
        inbox_prefix="_INBOX_viewer",
        allow_reconnect=False,
    )
    return raw, errors
