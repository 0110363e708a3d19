"""A TCP hop between a NATS client and a real nats-server that hands a key-value watch its entries the way a
loaded server can: after the answer to the watch's consumer info, which said nothing was pending any more.

The hop passes every frame through unchanged, in order, except two: the client's first consumer-info request
goes on only once the consumer has delivered its last entry (the one whose ack subject counts 0 pending), so
the server answers "none pending"; and the consumer's messages (subjects `$KV.…`) that arrive before that answer
are handed to the client only after it has acted on the answer (its next frame to the server). On a machine
where the server's delivering goroutine waited for a core, the client read exactly this order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from helpers.slack import bound

_SIZED = {
    b"PUB",
    b"HPUB",
    b"MSG",
    b"HMSG",
}  # the operations followed by a payload (its size last on the line)


async def _frames(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Each protocol frame whole (its line and payload); ends when the peer closes."""
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
            words = line.split()
            size = int(words[-1]) + 2 if words and words[0].upper() in _SIZED else 0
            yield line + (await reader.readexactly(size) if size else b"")
        except (asyncio.IncompleteReadError, ConnectionError):
            return


def _pending(words: list[bytes]) -> int | None:
    """What the consumer had still to deliver after this message, from its ack subject ($JS.ACK.<stream>.
    <consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>, or the longer form with a domain, an
    account and a token of its own)."""
    ack = words[3] if len(words) > (5 if words[0] == b"HMSG" else 4) else b""
    tokens = ack.split(b".")
    if tokens[:2] != [b"$JS", b"ACK"] or not (len(tokens) == 9 or len(tokens) >= 12):
        return None
    return int(tokens[8] if len(tokens) == 9 else tokens[10])


class LateHop:
    """`async with LateHop(server_url) as hop`: connect one client to `hop.url`."""

    def __init__(self, server_url: str, hold_s: float = 10.0) -> None:
        where = urlsplit(server_url.split(",")[0])
        self._upstream = (where.hostname or "127.0.0.1", where.port or 4222)
        self.hold_s = bound(hold_s)  # the longest either hold lasts (the case under test then did not arise)
        self.url = ""
        self.reordered = 0  # consumer messages held back when the consumer-info answer went to the client
        self._server: asyncio.base_events.Server | None = None
        self._pumps: list[asyncio.Task[None]] = []
        self._reply: bytes | None = None  # where the server answers the consumer-info request
        self._delivered = asyncio.Event()  # the consumer's last entry has come (held)
        self._answered = asyncio.Event()  # the answer went to the client (the entries are still held)
        self._held: list[bytes] = []
        self._client: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> LateHop:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"nats://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()
        for pump in self._pumps:
            pump.cancel()
        for pump in self._pumps:
            with contextlib.suppress(asyncio.CancelledError):
                await pump

    async def _serve(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_connection(*self._upstream)
        self._client = client_out
        self._pumps += [
            asyncio.create_task(self._to_server(client_in, server_out)),
            asyncio.create_task(self._to_client(server_in, client_out)),
            asyncio.create_task(self._release_late()),
        ]

    async def _release(self) -> None:
        """The held entries to the client (once)."""
        held, self._held = self._held, []
        if held and self._client is not None:
            self._client.write(b"".join(held))
            await self._client.drain()

    async def _release_late(self) -> None:
        await self._answered.wait()
        await asyncio.sleep(self.hold_s)  # the client said nothing more: it waits for them
        await self._release()

    async def _to_server(self, frames_in: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        async for frame in _frames(frames_in):
            words = frame.split(b"\r\n", 1)[0].split()
            if self._reply is None and words[0] == b"PUB" and words[1].startswith(b"$JS.API.CONSUMER.INFO."):
                self._reply = words[2]  # asked once the consumer delivered all: the answer says none pending
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._delivered.wait(), self.hold_s)
            elif self._answered.is_set():
                # the client acted on the answer (it asked again, or stopped the watch): the entries come now
                await self._release()
            out.write(frame)
            await out.drain()
        out.close()

    async def _to_client(self, frames_in: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        async for frame in _frames(frames_in):
            words = frame.split(b"\r\n", 1)[0].split()
            if not self._answered.is_set() and words[0] in (b"MSG", b"HMSG"):
                if words[1].startswith(b"$KV."):
                    self._held.append(frame)
                    if _pending(words) == 0:
                        self._delivered.set()
                    continue
                if words[1] == self._reply:
                    self.reordered = len(self._held)
                    self._answered.set()
            out.write(frame)
            await out.drain()
        out.close()
