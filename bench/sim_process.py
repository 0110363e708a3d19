"""The bundled simulator as a separate process for benchmarks, so it never shares a core's GIL with the
consumer being measured; shared by bench/simulator.py, bench/ingest.py and bench/ui.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx


def start_simulator(events: int, *flags: str) -> tuple[subprocess.Popen[str], str]:
    """`tenant-events simulator` with an ephemeral backlog of `events`; returns (process, auth_url) once ready."""
    exe = Path(sys.executable).with_name("tenant-events")
    cmd = [
        str(exe),
        "simulator",
        "--ephemeral",
        "--port",
        "0",
        "--backlog",
        str(events),
        "--rate",
        "0",
        "--rotate-after",
        "0",
        "--max-connections",
        "8",
        "--rate-limit",
        "100000",
        *flags,
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"auth_url=(\S+)", line)
        if found:
            print(
                f"simulator ready with {events:,} backlog events in {time.perf_counter() - started:.1f} s",
                flush=True,
            )
            return proc, found.group(1)
    raise SystemExit("simulator exited before it was ready")


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process so far (Linux /proc): the simulator's share of the cores
    during a run, to tell how much of the machine was left over."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def admin_token(auth_url: str, ttl: int = 3600) -> str:
    """An access token (an hour by default) from the simulator's loopback admin endpoint."""
    reply = httpx.post(f"{auth_url}/_sim/token", json={"ttl": ttl})
    reply.raise_for_status()
    return str(reply.json()["access_token"])
