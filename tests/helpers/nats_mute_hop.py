"""A TCP hop between NATS clients (another process may use it) and a real nats-server that loses the requests on
one subject while muted: the client's request then times out, as it does when a loaded hub answers too late.

Every other frame passes both ways unchanged and in order, on every connection made through the hop. The hop
runs its own event loop on a thread, so a subprocess (a relay) can connect to `hop.url` while the test waits."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from urllib.parse import urlsplit

from helpers.nats_late_hop import _frames


class MuteHop:
    """`with MuteHop(server_url, "$JS.API.…") as hop`: requests published on subjects starting with the prefix are
    dropped (counted in `dropped`) until `hop.unmute()`."""

    def __init__(self, server_url: str, prefix: str) -> None:
        where = urlsplit(server_url.split(",")[0])
        self._upstream = (where.hostname or "127.0.0.1", where.port or 4222)
        self._prefix = prefix.encode()
        self._muted = threading.Event()
        self._muted.set()
        self.dropped = 0
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mute-hop", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()

    def unmute(self) -> None:
        self._muted.clear()

    def __enter__(self) -> MuteHop:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._open(), self._loop).result(10)
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"nats://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def _close(self) -> None:
        assert self._server is not None
        self._server.close()
        for pump in list(self._pumps):
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump

    async def _serve(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        server_in, server_out = await asyncio.open_connection(*self._upstream)
        for pump in (
            self._pump(client_in, server_out, mute=True),
            self._pump(server_in, client_out, mute=False),
        ):
            task = asyncio.create_task(pump)
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _pump(self, frames_in: asyncio.StreamReader, out: asyncio.StreamWriter, *, mute: bool) -> None:
        try:
            async for frame in _frames(frames_in):
                words = frame.split(b"\r\n", 1)[0].split()
                request = words[0].upper() in (b"PUB", b"HPUB") and words[1].startswith(self._prefix)
                if mute and request and self._muted.is_set():
                    self.dropped += 1
                    continue
                out.write(frame)
                await out.drain()
        except ConnectionError:
            pass
        finally:
            out.close()
