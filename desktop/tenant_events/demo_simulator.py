"""The demo tenant: `tenant-events simulator --port 0` as a child process that cannot outlive the app.

Started with PR_SET_PDEATHSIG(SIGTERM) set in the child before exec (prctl(2)): when the app dies for any
reason, even SIGKILL, the kernel sends SIGTERM to the simulator. On quit the app terminates it and waits.
Its stdout's "Tenant simulator ready: base_url=... auth_url=..." line tells where it
listens; the lines that follow carry the demo client id. No Qt here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1
READY = re.compile(r"Tenant simulator ready: base_url=(\S+) auth_url=(\S+)")
# "  demo client (public, PKCE, any-port loopback redirect to /callback): tenant-events-demo"
DEMO_CLIENT = re.compile(r"^\s*demo client\b.*:\s*(\S+)\s*$", re.IGNORECASE)


def _prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up here in the parent: the child between fork and exec may not look anything up.
    (`ctypes.util.find_library` there imports modules and starts `ldconfig`; a lock another thread of the app
    held at the fork, such as the import lock while the window loads, stays held in the child for ever, and the
    demo never started: seen once in the window-memory bench.)"""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(prctl: Callable[..., int]) -> Callable[[], None]:
    """What the child runs between fork and exec: one call, nothing to import or look up."""

    def run() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    return run


def simulator_argv(data_dir: Path, extra: list[str] | None = None) -> list[str]:
    """`tenant-events simulator ...` from this interpreter, or from the frozen app binary."""
    head = [sys.executable] if getattr(sys, "frozen", False) else [sys.executable, "-m", "tenant_events"]
    return [*head, "simulator", "--port", "0", "--data-dir", str(data_dir), *(extra or [])]


@dataclass
class DemoSimulator:
    """A running simulator child and where it listens."""

    process: subprocess.Popen[str]
    base_url: str = ""
    auth_url: str = ""
    demo_client_id: str = ""
    output: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    async def stop(self, wait_s: float = 10.0) -> int | None:
        """SIGTERM, then SIGKILL after `wait_s`: it ends its streams within 3 s, but a busy machine (a second
        app, a build) has taken over 5 s to see it end."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, wait_s)
            except subprocess.TimeoutExpired:
                log.warning("demo simulator ignored SIGTERM; killing pid %s", self.pid)
                self.process.kill()
                await asyncio.to_thread(self.process.wait, wait_s)
        with contextlib.suppress(OSError):
            if self.process.stdout is not None:
                self.process.stdout.close()
        return self.process.returncode


def _read_until_ready(sim: DemoSimulator) -> None:
    assert sim.process.stdout is not None
    for line in sim.process.stdout:
        sim.output.append(line.rstrip())
        if m := READY.search(line):
            sim.base_url, sim.auth_url = m.group(1), m.group(2)
        if m := DEMO_CLIENT.search(line):
            sim.demo_client_id = m.group(1).strip(",;")
        if sim.base_url and sim.demo_client_id:
            return
    raise RuntimeError(
        f"the demo simulator exited (rc {sim.process.poll()}) before it was ready: "
        + " | ".join(sim.output[-5:])
    )


def _drain(sim: DemoSimulator) -> None:
    stream = sim.process.stdout
    if stream is None:
        return
    with contextlib.suppress(ValueError, OSError):
        for line in stream:
            if "secret" not in line.lower():  # the service client's secret never reaches the log
                log.debug("simulator: %s", line.rstrip())


def spawn_simulator(data_dir: Path, extra: list[str] | None = None) -> DemoSimulator:
    """Start the child (it dies with this process, see the module docstring)."""
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    prctl = _prctl() if sys.platform.startswith("linux") else None
    process = subprocess.Popen(
        simulator_argv(data_dir, extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        preexec_fn=_die_with_parent(prctl) if prctl is not None else None,
    )
    return DemoSimulator(process)


async def start_demo_simulator(
    data_dir: Path, extra: list[str] | None = None, wait_s: float = 30.0
) -> DemoSimulator:
    """Start the child and wait for its ready line; raises RuntimeError with its last output if it fails. It acts
    out the demo scenario (an admin role granted in its first minute, then other alert-worthy incidents) unless
    `extra` names another `--scenario`."""
    extra = list(extra or [])
    if "--scenario" not in extra:
        extra += ["--scenario", "demo"]
    sim = await asyncio.to_thread(spawn_simulator, data_dir, extra)
    try:
        await asyncio.wait_for(asyncio.to_thread(_read_until_ready, sim), wait_s)
    except BaseException:
        await sim.stop()
        raise
    threading.Thread(target=_drain, args=(sim,), name="simulator-output", daemon=True).start()
    log.info("demo simulator pid %s ready at %s", sim.pid, sim.base_url)
    return sim
