"""The short requests of sign-in (discovery, then the code exchange once the browser comes back) never go out on a
connection the server has let go idle for long. Servers close idle keep-alive connections after a few seconds
(5 s is common); a request written on one in the same moment is read by nobody, and the user heard "cannot reach
the token endpoint" for a sign-in that had worked. A server that hangs up on any second request of a connection
stands for that moment here."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from tenant_events.http import api_client

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture
def hangs_up_on_reuse() -> Iterator[str]:
    """A server that answers the first request of each connection and closes the connection on the second."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            for n in range(2):
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                if n == 0:
                    conn.sendall(RESPONSE)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_a_request_after_a_pause_of_a_few_seconds_goes_out_on_a_new_connection(
    hangs_up_on_reuse: str,
) -> None:
    async def discovery_then_exchange() -> int:
        async with api_client() as client:
            first = await client.get(f"{hangs_up_on_reuse}/.well-known/openid-configuration")
            await asyncio.sleep(3)  # the user in the browser: longer than the client keeps a connection idle
            second = await client.post(f"{hangs_up_on_reuse}/oauth/token", data={"code": "x"})
            return first.status_code * 1000 + second.status_code

    assert asyncio.run(discovery_then_exchange()) == 200_200
