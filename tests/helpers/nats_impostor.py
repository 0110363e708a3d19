"""A NATS server impostor on 127.0.0.1: answers an INFO that does not ask for TLS (and PONG to PING) and records
every byte a client sends it — what a hub client must never send credentials to."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from helpers.nats_hub import free_port


@dataclass
class Impostor:
    """A NATS server impersonation on 127.0.0.1 that never asks for TLS; `received` is every byte sent to it."""

    port: int = field(default_factory=free_port)
    received: bytearray = field(default_factory=bytearray)
    connections: int = 0
    _loop: asyncio.AbstractEventLoop | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _stopping: asyncio.Event = field(default_factory=asyncio.Event)
    _handlers: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def info(self) -> bytes:
        body = {
            "server_id": "IMPOSTOR",
            "server_name": "hub",
            "version": "2.15.1",
            "proto": 1,
            "go": "go1.24",
            "host": "127.0.0.1",
            "port": self.port,
            "headers": True,
            "auth_required": True,
            "max_payload": 1048576,
            "jetstream": True,
            "nonce": "bm9uY2Vub25jZQ",
        }
        return b"INFO " + json.dumps(body).encode() + b"\r\n"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.append(task)
        self.connections += 1
        writer.write(self.info)
        await writer.drain()
        try:
            while chunk := await reader.read(65536):
                self.received.extend(chunk)
                if b"PING\r\n" in chunk:  # play along: an old client would now think it is signed in
                    writer.write(b"PONG\r\n")
                    await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    def run(self) -> None:
        async def main() -> None:
            self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
            server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
            self._ready.set()
            await self._stopping.wait()
            server.close()
            for handler in self._handlers:
                handler.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            await server.wait_closed()

        asyncio.run(main())

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)


@contextlib.contextmanager
def running_impostor() -> Iterator[Impostor]:
    """An impostor serving in a thread of its own until the block ends."""
    fake = Impostor()
    thread = threading.Thread(target=fake.run, daemon=True)
    thread.start()
    assert fake._ready.wait(10)
    yield fake
    fake.stop()
    thread.join(10)
