"""Fixtures and helpers for engine, store and CLI tests: run a real engine against the real simulator.

`follow(sim, db, until=...)` runs one StreamEngine on a fresh asyncio loop against a running simulator,
records every state change and committed batch, and stops when `until(recorder)` holds (or fails on timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from httpx_sse import connect_sse

from helpers.slack import bound
from tenant_events.store import CommitResult, EventReader, StoreWriter
from tenant_events.stream.engine import EngineConfig, StreamEngine
from tenant_events.stream.tokens import StaticTokenProvider, TokenProvider
from tenant_events.values.stream_states import StateChange, StreamState

OLD = "2000-01-01T00:00:00Z"  # from_timestamp that replays the simulator's whole backlog


@dataclass
class Recorder:
    engine: StreamEngine
    db: Path
    states: list[StateChange] = field(default_factory=list)
    commits: list[CommitResult] = field(default_factory=list)

    @property
    def stored(self) -> int:
        return sum(c.inserted for c in self.commits)

    def reasons(self) -> list[str]:
        return [s.reason for s in self.states]

    def first(self, reason: str) -> StateChange:
        for s in self.states:
            if s.reason == reason:
                return s
        raise AssertionError(
            f"no state with reason {reason!r}; saw {[(s.state.value, s.reason) for s in self.states]}"
        )

    def reached(self, state: StreamState) -> bool:
        return any(s.state is state for s in self.states)


async def _follow(
    config: EngineConfig,
    tokens: TokenProvider,
    db: Path,
    until: Callable[[Recorder], bool],
    limit_s: float,
    during: Callable[[Recorder], Any] | None,
) -> Recorder:
    writer = await asyncio.to_thread(StoreWriter, db)
    engine = StreamEngine(config, tokens, writer)
    rec = Recorder(engine, db)
    engine.on_state.append(rec.states.append)
    engine.on_commit.append(rec.commits.append)
    task = asyncio.create_task(engine.run())
    deadline = time.monotonic() + bound(limit_s)
    try:
        while not until(rec):
            if task.done():
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out; states: {[(s.state.value, s.reason, s.message) for s in rec.states][-12:]}; "
                    f"stored {rec.stored}"
                )
            if during is not None:
                result = during(rec)
                if asyncio.iscoroutine(result):
                    await result
            await asyncio.sleep(0.02)
    finally:
        engine.stop()
        await asyncio.wait_for(task, 30)
        await asyncio.to_thread(writer.close)
    return rec


def follow(
    sim: Any,
    db: Path,
    *,
    until: Callable[[Recorder], bool],
    token: str | None = None,
    tokens: TokenProvider | None = None,
    timeout: float = 30.0,
    during: Callable[[Recorder], Any] | None = None,
    **config: Any,
) -> Recorder:
    """Run an engine against `sim` into `db` until `until(recorder)`; config fields as EngineConfig kwargs."""
    cfg = EngineConfig(base_url=config.pop("base_url", sim.base_url), name=db.stem, **config)
    provider = tokens or StaticTokenProvider(token or sim.mint_token())
    return asyncio.run(_follow(cfg, provider, db, until, timeout, during))


def stored_ids(db: Path) -> list[str]:
    with EventReader(db) as reader:
        return [e.event_id for e, _ in reader.export_iter()]


def reference_ids(sim: Any, expected: int, timeout: float = 30.0) -> list[str]:
    """The simulator's event ids in stream order, read with a bare SSE client (first occurrence of each id)."""
    seen: dict[str, None] = {}
    cursor: str | None = None
    deadline = time.monotonic() + bound(timeout)
    with httpx.Client(timeout=httpx.Timeout(10.0, read=5.0)) as client:
        while len(seen) < expected and time.monotonic() < deadline:
            params = {"from": cursor} if cursor else {"from_timestamp": OLD}
            headers = {"Authorization": f"Bearer {sim.mint_token()}"}
            try:
                with connect_sse(
                    client, "GET", sim.base_url + "/events", params=params, headers=headers
                ) as src:
                    for sse in src.iter_sse():
                        try:
                            data = orjson.loads(sse.data)
                        except orjson.JSONDecodeError:
                            continue
                        if isinstance(data, dict) and isinstance(data.get("offset"), str):
                            cursor = data["offset"]
                        if isinstance(data, dict) and isinstance(data.get("event"), dict):
                            seen.setdefault(str(data["event"].get("id")), None)
                        if len(seen) >= expected:
                            break
            except (httpx.TransportError, httpx.HTTPStatusError):
                time.sleep(0.1)
    return list(seen)


CHILD_PYTHON = Path(__file__).with_name("child_python")  # its sitecustomize.py keeps unraisable exceptions
UNRAISABLE_ENV = "TENANT_EVENTS_TEST_UNRAISABLE"


class CliProcess(subprocess.Popen[str]):
    """`tenant-events ARGS` as a subprocess. Every exception Python could only print in it ("Exception ignored
    in …") is kept in `unraisable_file` (child_python/sitecustomize.py), and fails the test afterwards."""

    def __init__(self, args: list[str], *, env: dict[str, str] | None = None, **kw: Any) -> None:
        fd, name = tempfile.mkstemp(prefix="unraisable-", suffix=".txt")
        os.close(fd)
        self.unraisable_file = Path(name)
        env = dict(os.environ if env is None else env)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHILD_PYTHON), env.get("PYTHONPATH")]))
        env[UNRAISABLE_ENV] = name
        super().__init__(args, env=env, **kw)
        _STARTED.append(self)


_STARTED: list[CliProcess] = []


def cli(*args: str, env: dict[str, str] | None = None, **kw: Any) -> CliProcess:
    """Start `tenant-events ARGS` as a subprocess (the installed console script's module)."""
    full_env = {**os.environ, **(env or {})}
    return CliProcess(
        [sys.executable, "-m", "tenant_events", *args],
        env=full_env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **kw,
    )


def demo_stream_args(sim: Any, data_dir: Path, *more: str) -> list[str]:
    """The arguments of `tenant-events stream` of the simulator `sim` into `data_dir` as the tenant "demo"."""
    return ["stream", "--base-url", sim.base_url, "--name", "demo", "--data-dir", str(data_dir), *more]


def demo_stream(sim: Any, data_dir: Path, *more: str, env: dict[str, str] | None = None) -> CliProcess:
    """`tenant-events stream` of `sim` into `data_dir` as the tenant "demo", then `more` arguments; signed in with
    a token minted for it unless `env` brings one."""
    token = env if env is not None else {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    return cli(*demo_stream_args(sim, data_dir, *more), env=token)


def unraisable_printed(procs: list[CliProcess]) -> str | None:
    """The unraisable exceptions any of `procs` printed (once they have exited), or None. Removes their files."""
    found = []
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)  # a test that signalled it but did not wait
        if proc.poll() is not None:  # a test that killed it without communicate(): its pipes stay open
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        text = proc.unraisable_file.read_text(encoding="utf-8") if proc.unraisable_file.exists() else ""
        proc.unraisable_file.unlink(missing_ok=True)
        if text:
            found.append(f"{' '.join(map(str, proc.args))} printed:\n{text[-4000:]}")
    return "\n".join(found) or None


@pytest.fixture(autouse=True)
def _cli_prints_no_unraisable_exception() -> Any:
    """Fails a test whose CLI subprocess printed an unraisable exception (e.g. the HTTP library's clean-up run
    off the event loop: "Exception ignored in … RuntimeError: no running event loop")."""
    first = len(_STARTED)
    yield
    started, _STARTED[first:] = _STARTED[first:], []
    printed = unraisable_printed(started)
    if printed:
        pytest.fail(printed)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tenants" / "demo.sqlite3"


__all__ = [
    "OLD",
    "CliProcess",
    "Recorder",
    "cli",
    "db_path",
    "follow",
    "reference_ids",
    "replace",
    "stored_ids",
]
