"""Another process holding the sign-in's refresh lock (its token request hangs) is a wait, not a sign-out.

Real processes: `tenant-events login` then `tenant-events stream` against the real simulator, the session's
keyring (gnome-keyring under ./run test), and the lock file of the profile's slot (auth/stored_sign_in.py) held
by this test as another process would hold it. The stream's bound on the lock is lowered through
TENANT_EVENTS_SIGNIN_LOCK_WAIT so the test does not wait the real two minutes.
"""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

from helpers.browser import cli_login
from helpers.fixtures_engine import OLD, cli
from helpers.sign_ins import forget_token, stored_token
from helpers.slack import bound
from tenant_events.auth.stored_sign_in import LOCK_WAIT_ENV, slot_for
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings

REAL_KEYRING = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL_KEYRING, reason="needs the session keyring: run via ./run test"),
]


def _env(lock_wait: float = 0.5) -> dict[str, str]:
    env = {**os.environ, "TENANT_EVENTS_LOG_JSON": "1", LOCK_WAIT_ENV: str(lock_wait)}
    env.pop("TENANT_EVENTS_ACCESS_TOKEN", None)
    return env


@pytest.fixture
def signed_in(make_simulator, tmp_path) -> Iterator[tuple[str, str, Any]]:
    """`tenant-events login` against the simulator; yields (data dir, profile name, simulator); forgets the
    token after."""
    sim = make_simulator(backlog=5, heartbeat=0.2)
    data = str(tmp_path / "data")
    login = cli_login(sim.auth_url, sim.demo_client_id, data, env=_env())
    assert login.returncode == 0, login.err
    name = login.out.strip().splitlines()[-1].split()[3]
    try:
        yield data, name, sim
    finally:
        forget_token(data, name)


def _lock_file(data: str, name: str) -> Path:
    paths = AppPaths.resolve(data)
    lock = slot_for(load_settings(paths).tenant(name), paths.data_dir).lock_file
    assert lock is not None
    lock.parent.mkdir(parents=True, exist_ok=True)
    return lock


def _collect(stream: IO[str], into: list[str]) -> threading.Thread:
    def read() -> None:
        for line in stream:
            into.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def _until(done: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)  # polling another process's output
    return True


@dataclass(frozen=True)
class Run:
    """What a `stream` started behind the held lock did: said it waits, kept running, went on once it was free."""

    said: bool
    running: bool
    went_on: bool
    code: int | None
    text: str


def _stream_behind_held_lock(
    data: str, name: str, said: Callable[[list[str]], bool], *args: str, lock_wait: float, hold: float = 0.0
) -> Run:
    """`stream` started while this test holds the sign-in's lock (another process, in the middle of its
    refresh); once `said(its stderr lines)` (or it ended), the lock is held `hold` s more, then let go."""
    with _lock_file(data, name).open("a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        stream = cli(
            *("stream", "--tenant", name, "--data-dir", data, "--from-timestamp", OLD, "--jsonl", "-"),
            *args,
            env=_env(lock_wait),
        )
        assert stream.stdout is not None and stream.stderr is not None
        out: list[str] = []
        err: list[str] = []
        readers = [_collect(stream.stdout, out), _collect(stream.stderr, err)]
        try:
            was_said = _until(lambda: said(err) or stream.poll() is not None, bound(30))
            time.sleep(hold)  # the lock still held past a timer of the stream's own
            running = stream.poll() is None
            fcntl.flock(held.fileno(), fcntl.LOCK_UN)  # that process is done
            went_on = running and _until(lambda: len(out) >= 5, bound(30))
            stream.send_signal(signal.SIGTERM)
            stream.wait(bound(30))
        finally:
            if stream.poll() is None:
                stream.kill()
                stream.wait()
            for reader in readers:
                reader.join(10)
            stream.stdout.close()
            stream.stderr.close()
    return Run(was_said, running, went_on, stream.returncode, "".join(err))


def _waiting(name: str) -> str:
    return f"waiting for another Tenant Events process that is refreshing the sign-in of {name}"


def test_a_stream_waits_for_another_process_refreshing_the_sign_in_and_goes_on(signed_in):
    data, name, _ = signed_in
    waiting = _waiting(name)
    run = _stream_behind_held_lock(
        data, name, lambda err: sum(waiting in line for line in err) >= 2, lock_wait=0.5
    )
    text = run.text
    assert run.said and run.running, f"the stream did not keep waiting (exit {run.code}):\n{text}"
    assert run.went_on, f"the stream did not go on once the lock was free:\n{text}"
    assert run.code == 0, text
    assert "signed out" not in text, text
    assert "5 events stored" in text, text


def test_a_starting_stream_says_at_once_what_it_waits_for_and_does_not_take_it_for_an_unreachable_server(
    signed_in,
):
    """The wait is said while it lasts (not only when a whole bound has run out), and the first-contact timer
    (here 2 s, 20 s by default) does not give up on a server it has not asked yet."""
    data, name, _ = signed_in
    waiting = _waiting(name)
    run = _stream_behind_held_lock(
        data,
        name,
        lambda err: any(waiting in line for line in err),
        *("--unreachable-timeout", "2"),
        lock_wait=60,
        hold=3,
    )
    text = run.text
    assert run.said and run.running, f"the stream did not keep waiting (exit {run.code}):\n{text}"
    assert f"connecting — {waiting}" in text, text
    assert run.went_on and run.code == 0, text
    assert "cannot reach" not in text and "signed out" not in text, text


def test_a_login_while_another_process_holds_the_lock_is_one_line_not_a_sign_out(signed_in):
    """A one-shot command cannot wait for good: it says what is happening in one line and exits non-zero, and
    the stored sign-in is left as it was."""
    data, name, sim = signed_in
    with _lock_file(data, name).open("a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        before = stored_token(data, name)
        login = cli_login(sim.auth_url, sim.demo_client_id, data, "--name", name, env=_env())
    lines = login.err.strip().splitlines()
    busy = [line for line in lines if "has been refreshing the sign-in" in line]
    assert login.returncode == 2, login.err
    assert busy == [
        f"tenant-events: another Tenant Events process has been refreshing the sign-in of {name} for over 0.5 s"
        " — try again when it is done, or stop that process if it hangs"
    ], login.err
    assert "signed out" not in login.err
    assert stored_token(data, name) == before
