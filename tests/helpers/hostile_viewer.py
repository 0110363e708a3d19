"""A hub client written to misbehave: raw nats-py signed in as one of the shipped accounts.conf users (its own
inbox prefix, as the permissions demand), doing what a person holding that user's password could do, and
recording what the server refused."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import nats
import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client as NATS


class Hostile:
    """One user's connection; the server's refusals arrive on the side (-ERR) and are kept in `errors`."""

    def __init__(self, nc: NATS, errors: list[Exception]) -> None:
        self.nc, self.errors = nc, errors
        self.js = nc.jetstream(timeout=2.0)

    def refused(self) -> list[str]:
        return [str(e).lower() for e in self.errors if "permissions violation" in str(e).lower()]

    async def request(self, subject: str, body: dict[str, object]) -> dict[str, object] | None:
        """A JetStream API request; None when it was never answered (refused by the permissions)."""
        try:
            reply = await self.nc.request(subject, json.dumps(body).encode(), timeout=1.0)
        except nats.errors.TimeoutError:
            return None
        answer = orjson.loads(reply.data)
        assert isinstance(answer, dict)
        return answer

    async def publish(self, subject: str, data: bytes, headers: dict[str, str]) -> str:
        """A JetStream publish: 'stored', the server's refusal, or 'no answer' (refused by the permissions)."""
        try:
            await self.js.publish(subject, data, headers=headers)
        except nats.errors.TimeoutError:
            return "no answer"
        except nats.js.errors.APIError as exc:
            return str(exc.description)
        return "stored"


@asynccontextmanager
async def hostile(hub, user: str = "viewer") -> AsyncIterator[Hostile]:
    errors: list[Exception] = []

    async def record(exc: Exception) -> None:
        errors.append(exc)

    nc = await nats.connect(
        hub.urls,
        user=user,
        password=getattr(hub.credentials, user),
        inbox_prefix=f"_INBOX_{user}",  # its own (packaging/nats/accounts.conf)
        error_cb=record,
        allow_reconnect=False,
    )
    try:
        yield Hostile(nc, errors)
    finally:
        await nc.close()
