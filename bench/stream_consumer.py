"""The real `tenant-events stream` command as a consumer of bench/ingest.py, with the built-in pack or --no-alerts.

The command runs as a user runs it (its own process, from its start: imports, the store's creation, the rules'
start), into a fresh data dir, signed in with a simulator token. This process watches its database through
SQLite, read-only, every 20 ms: the time the n-th event was stored, and the time the rules had evaluated every
event up to it (`counters.alerts_upto`, which moves in the transaction that stores the alerts it raised), then
stops the command with SIGTERM and reads its CPU time (its rules' process's included) and the peak RSS of the
larger of the two; the write-ahead log's largest size is sampled by stat as it goes. The CPU of the command and
of each process it started (the rules') is also read from /proc at the moment both times are known, before the
stop: what each process spent on the run itself.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OLD = "2000-01-01T00:00:00Z"
POLL = 0.02  # seconds between two looks at the database
LIMIT_S = 900.0  # a run that takes longer is reported as failed


def _seqs(db: Path) -> tuple[int, int]:
    """(last stored seq, last evaluated seq) of the command's database; (0, 0) until it is there."""
    if not db.exists():
        return 0, 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
    except sqlite3.Error:
        return 0, 0
    try:
        stored = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
        evaluated = conn.execute("SELECT value FROM counters WHERE name = 'alerts_upto'").fetchone()
        return (int(stored[0]) if stored else 0), (int(evaluated[0]) if evaluated else 0)
    except sqlite3.Error:  # the schema is still being made
        return 0, 0
    finally:
        conn.close()


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc); 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def consume_stream(auth_url: str, token: str, n: int, *, alerts: bool) -> dict[str, float]:
    """Seconds from the command's start until `n` events are stored (`seconds`) and, with the pack, until every
    one of them has been evaluated (`alerts_seconds`)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-stream-"))
    db = tmp / "tenants" / "bench.sqlite3"  # AppPaths.database_file of the profile "bench"
    cmd = [
        str(Path(sys.executable).with_name("tenant-events")),
        "stream",
        "--base-url",
        auth_url + "/api/v2",
        "--name",
        "bench",
        "--data-dir",
        str(tmp),
        "--from-timestamp",
        OLD,
        *([] if alerts else ["--no-alerts"]),
    ]
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": token}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stored_at = evaluated_at = None
    command_cpu = children_cpu = 0.0
    wal = db.with_name(db.name + "-wal")
    wal_max = 0
    deadline = started + LIMIT_S
    try:
        while proc.poll() is None:
            if time.perf_counter() > deadline:
                raise SystemExit(
                    f"stream: {n:,} events not stored and evaluated within {LIMIT_S:.0f} s ({db})"
                )
            stored, evaluated = _seqs(db)
            with contextlib.suppress(OSError):  # (its size, by stat: no open of a file SQLite holds)
                wal_max = max(wal_max, wal.stat().st_size)
            now = time.perf_counter() - started
            if stored_at is None and stored >= n:
                stored_at, target = now, stored
            if stored_at is not None and (not alerts or evaluated >= target):
                evaluated_at = now
                command_cpu = _cpu(proc.pid)
                children_cpu = sum(_cpu(c) for c in _children(proc.pid))
                break
            time.sleep(POLL)
        else:
            raise SystemExit(f"stream ended early ({proc.returncode}): {proc.stderr.read()[-2000:]}")  # type: ignore[union-attr]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"stream exited {proc.returncode}: {err[-2000:]}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(tmp)
    assert stored_at is not None and evaluated_at is not None
    return {
        "seconds": stored_at,
        "alerts_seconds": evaluated_at,
        "events": n,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "command_cpu_s": command_cpu,  # at the moment both times were known: the command's own process
        "children_cpu_s": children_cpu,  # and the processes it started (the rules')
        "peak_rss_mb": usage.ru_maxrss / 1024,  # of the largest process: the command, or its rules' process
        "wal_max_mib": wal_max / 2**20,
    }
