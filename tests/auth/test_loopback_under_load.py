"""The sign-in callback listener under idle and malformed connections: the real `login` finishes at once, and
the listener logs one short line per malformed request, never a traceback.

Before: 1,100 idle connections to the listener (the process's file-descriptor limit 1,024) made every accept
fail with a logged traceback and delayed the sign-in by 15 s or more (3.8 MB of log); a malformed request line
logged a traceback; a connection still open at exit logged an ERROR traceback. Now at most 128 connections are
open at once (a new one closes the oldest still waiting), idle ones time out quietly, and close() ends them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from helpers.browser import act_as_browser
from tenant_events.auth.errors import SignInFailed
from tenant_events.auth.loopback import LoopbackListener

IDLE = 1100
CHILD_FD_LIMIT = 1024  # as on the machine where the listener ran out of descriptors
MALFORMED = [
    b"GET http://[::1 HTTP/1.1\r\n\r\n",
    b"\x00\xff\xfe\x1b[2J garbage\r\n\r\n",
    b"POST /callback HTTP/1.1\r\n\r\n",
]


@contextlib.contextmanager
def fd_limit_at_least(count: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < count:
        pytest.skip(f"this machine allows {hard} open files; the test needs {count}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, count), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def child_fd_limit() -> None:
    resource.setrlimit(
        resource.RLIMIT_NOFILE, (CHILD_FD_LIMIT, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    )


def open_idle(port: int, count: int) -> list[socket.socket]:
    """`count` connections that never send a byte (those the kernel could not queue in time are skipped)."""
    idle: list[socket.socket] = []
    for _ in range(count):
        sock = socket.socket()
        sock.settimeout(0.5)
        try:
            sock.connect(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        idle.append(sock)
    return idle


def send_malformed(port: int) -> list[bytes]:
    answers = []
    for request in MALFORMED:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(request)
            answers.append(sock.recv(64))
    return answers


def test_a_real_sign_in_finishes_at_once_while_1100_idle_connections_hold_the_listener(simulator, tmp_path):
    login = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "login",
            "--no-browser",
            "--auth-url",
            simulator.auth_url,
            "--client-id",
            simulator.demo_client_id,
            "--data-dir",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=child_fd_limit,
    )
    assert login.stdout is not None
    timer = threading.Timer(120, login.kill)
    timer.start()
    idle: list[socket.socket] = []
    try:
        with fd_limit_at_least(IDLE + 200):
            url = login.stdout.readline().strip()
            redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
            port = urlsplit(redirect).port
            assert port, url
            idle = open_idle(port, IDLE)
            answers = send_malformed(port)
            started = time.monotonic()
            act_as_browser(url, "allow")
            took = time.monotonic() - started
            _, err = login.communicate(timeout=60)
    finally:
        timer.cancel()
        for sock in idle:
            sock.close()
        if login.poll() is None:
            login.kill()
            login.communicate()
    assert len(idle) >= 900, len(idle)  # the flood really reached the listener
    assert login.returncode == 0, err[-3000:]
    assert took < 10, took  # before: 15 s and more, or never
    logs = err + "".join(p.read_text(errors="replace") for p in (tmp_path / "logs").glob("*.log*"))
    assert "Traceback" not in logs and "out of system resource" not in logs, logs[-3000:]
    assert len(err) < 20_000, len(err)
    assert [a.split(b"\r\n")[0] for a in answers] == [b"HTTP/1.1 400 Bad Request"] * 2 + [
        b"HTTP/1.1 405 Method Not Allowed"
    ], answers
    malformed = [line for line in logs.splitlines() if "ignored a malformed request" in line]
    assert malformed and all(len(line) < 300 and line.isprintable() for line in malformed), malformed


async def read_to_end(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.read()
    except ConnectionResetError:
        return b""


@pytest.mark.expect_warning_logs
def test_idle_and_malformed_connections_are_capped_answered_400_and_closed_quietly():
    """In this process: any ERROR asyncio logs (a handler that ended in a traceback, or cancelled at exit) fails
    the test (helpers/fixtures_logfail.py)."""

    async def scenario() -> tuple[LoopbackListener, list[int], SignInFailed]:
        listener = LoopbackListener()
        await listener.bind()
        idle = [await asyncio.open_connection("127.0.0.1", listener.port) for _ in range(300)]
        statuses = []
        async with httpx.AsyncClient(timeout=5) as client:
            for request in MALFORMED:
                reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
                writer.write(request)
                statuses.append(int((await reader.readline()).split()[1]))
                writer.close()
            waiter = asyncio.create_task(listener.wait("s1", 10))
            page = await client.get(listener.redirect_uri + "?state=s1&error=access_denied")
            assert page.status_code == 200
            with pytest.raises(SignInFailed) as caught:
                await waiter  # wait() closes the listener: every idle connection ends with it
        closed = [await asyncio.wait_for(read_to_end(reader), 5) for reader, _ in idle]  # EOF or reset
        assert all(data == b"" for data in closed)
        for _, writer in idle:
            writer.close()
        return listener, statuses, caught.value

    listener, statuses, failed = asyncio.run(scenario())
    assert statuses == [400, 400, 405]
    assert listener.dropped_connections >= 300 - 128
    assert listener.malformed_requests == 2 and failed.code == "access_denied"


@pytest.mark.expect_warning_logs
def test_a_connection_still_open_when_the_loop_stops_ends_without_a_word(caplog):
    """The loop shut down around a listener nobody closed: its connections' handlers are cancelled, and say
    nothing (Python 3.11 logged each as "Exception in callback … CancelledError")."""

    async def scenario() -> None:
        listener = LoopbackListener()
        await listener.bind()
        clients = [await asyncio.open_connection("127.0.0.1", listener.port) for _ in range(3)]
        await asyncio.sleep(0.2)  # the handlers are reading
        for _, writer in clients:
            writer.transport.abort()  # this side only: the loop stops before the listener reads the end

    asyncio.run(scenario())
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")], caplog.text
    assert "Traceback" not in caplog.text
