"""The proving ground in one command: faults against the real CLI and the real simulator,
then one table — rounds, events sent, stored, lost, duplicated, rejected, max recovery time, RSS and open
file descriptors at start and end.

    .venv/bin/python bench/proving_ground.py           # full: 100 SIGKILL rounds, compressed 24-hour soak
    .venv/bin/python bench/proving_ground.py --quick   # CI-sized: 10 rounds, a compressed 3-hour soak

Scenarios (each on its own simulator and data dir; the CLI is `python -m tenant_events stream`):
  sigkill   the CLI SIGKILLed at a random moment each round (start-up, catch-up, live), restarted; the server
            rotates connections, re-sends duplicates, and each round's first connection carries one malformed
            message (bad JSON / bad envelope / unknown kind, in turn). Recovery = restart → stream connected.
  sigstop   SIGSTOP for 3× the stall timeout while events arrive, then SIGCONT. Recovery = SIGCONT → every
            event stored (the goal: live again within 1 s).
  network   drop mid-frame, stall, 5xx, 429 on successive connections. Recovery = emit → stored.
  restart   the simulator stopped and started again on the same port and data dir. Recovery = restart → stored.
  soak      24 hours compressed: 86,400 events (1/s for a day) and 288 rotations (the real service rotates about
            every 5 min), a drop every 30 compressed minutes. Recovery = worst time for a sampled total to be
            stored. The CLI runs under bench/mem_probe.py (same command, one sampling thread added), so besides
            RSS and fds the soak prints where the memory is — SQLite's page cache, glibc's heap in use and freed,
            the rest — and its RSS at the start, once SQLite's cache is full ("warm") and at the end; see
            bench/soak_memory.py. The row fails if memory other than freed heap grows after warm-up by more than
            soak_memory.LIVE_GROWTH_LIMIT_MB, or fds end above start + FD_SLACK. Its -wal file is sampled every
            5 ms: the row fails if it passes WAL_BOUND (16 MiB) at any moment.
  hub       the team hub: a 3-node NATS JetStream cluster (packaging/nats/cluster.conf), two `relay`s and one
            `stream --hub` viewer; each round SIGKILLs the streaming relay mid-stream and restarts it (every third
            round the viewer instead). The tenant allows one connection, so a second relay streaming at once
            would be refused. Recovery = kill → the standby leading (or the viewer reading again). Counts are the
            viewer's export against the simulator.

Every row also shows the disk: the events' own bytes (their JSON) next to the database file, its full-text index
and the -wal left after the last clean stop (SIGTERM), which must be at most WAL_AFTER_STOP (1 MiB).

"lost" counts events the simulator holds that the export lacks; "duplicated" counts ids exported more than once;
order is checked against a bare SSE read of the simulator. "rejected" is kept/injected: under SIGKILL a malformed
message received in the last instants before the kill is never committed, and the server (like the real one
after a glitch) does not resend it, so kept ≤ injected there; every other scenario must keep all of them.
Exit status 1 if any scenario loses, duplicates or reorders an event, the soak's memory or fds grow, or a WAL
passes its bound.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import psutil

import proving_hub  # bench/, next to this script
import soak_memory
from proving_rows import Row, table
from store_disk import Disk, WalWatch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fixtures_engine import OLD, reference_ids  # noqa: E402
from tenant_events.simulator.testing import SimulatorHandle, start_simulator  # noqa: E402
from tenant_events.store import EventReader  # noqa: E402

MALFORMED = ("bad_json", "bad_envelope", "unknown_kind")
STALL = 1.0  # the CLI's --stall-timeout in every scenario


class Cli:
    """One `tenant-events stream` process; a thread notes when it reports being connected."""

    def __init__(self, sim: SimulatorHandle, data: Path, probe: list[str] | None = None) -> None:
        """`probe`: run the CLI under bench/mem_probe.py with these probe options (same command, same process)."""
        env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=24 * 3600)}
        entry = [str(ROOT / "bench" / "mem_probe.py"), *probe, "--"] if probe else ["-m", "tenant_events"]
        args = [
            sys.executable,
            *entry,
            "stream",
            "--base-url",
            sim.base_url,
            "--name",
            "pg",
            "--data-dir",
            str(data),
            "--from-timestamp",
            OLD,
            "--stall-timeout",
            str(STALL),
        ]
        self.started = time.monotonic()
        self.connected: float | None = None
        self.proc = subprocess.Popen(
            args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            if self.connected is None and line.startswith(
                ("tenant-events: live", "tenant-events: catching up")
            ):
                self.connected = time.monotonic()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGCONT)
        self.proc.send_signal(signal.SIGTERM)
        if self.proc.wait(30) != 0:
            raise RuntimeError(f"stream exited {self.proc.returncode}: {''.join(self.err[-5:])}")


def count(db: Path) -> int:
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:  # not there yet, or being created
        return 0


def wait_stored(db: Path, n: int, cli: Cli, limit: float = 120) -> float:
    start = time.monotonic()
    while count(db) < n:
        if cli.proc.poll() is not None:
            raise RuntimeError(f"stream exited {cli.proc.returncode}: {''.join(cli.err[-5:])}")
        if time.monotonic() - start > limit:
            raise RuntimeError(f"only {count(db)} of {n} stored after {limit} s")
        time.sleep(0.01)
    return time.monotonic() - start


def account(row: Row, sim: SimulatorHandle, db: Path) -> Row:
    """Fill sent / stored / lost / duplicated / order / rejected from the simulator and the database."""
    row.sent = int(sim.stats()["events"])
    with EventReader(db) as reader:
        ids = [e.event_id for e, _ in reader.export_iter()]
        row.rejected = reader.rejected_count()
    row.stored = len(ids)
    row.duplicated = len(ids) - len(set(ids))
    reference = reference_ids(sim, row.sent, timeout=120)
    known = set(reference)
    row.lost = len(known - set(ids))
    row.out_of_order = [i for i in ids if i in known] != reference
    row.disk = Disk.of(db)  # every scenario ends with a clean stop of the CLI
    return row


def sigkill(work: Path, rounds: int, seed: int) -> Row:
    rng = random.Random(seed)
    sim = start_simulator(backlog=3000, heartbeat=0.1, rotate_after=0.7, rate=0, burst_every=0)
    try:
        sim.faults(duplicate_every=9)
        row, db = Row("sigkill", rounds), work / "tenants" / "pg.sqlite3"
        for i in range(rounds):
            sim.faults(malformed=MALFORMED[i % 3], fault_after=rng.randint(1, 40))
            row.injected += 1
            cli = Cli(sim, work)
            sim.emit(rng.randint(20, 120))
            time.sleep(rng.uniform(0.4, 1.4))
            cli.kill()
            if cli.connected is not None:
                row.recovery.append(cli.connected - cli.started)
        sim.faults(malformed="bad_envelope", fault_after=1)  # the last one must be kept: no kill follows
        row.injected += 1
        sim.emit(50)
        before = count_rejected(db)
        cli = Cli(sim, work)
        wait_stored(db, int(sim.stats()["events"]), cli)
        cli.stop()
        account(row, sim, db)
        if row.rejected <= before:
            raise RuntimeError("the malformed message of the uninterrupted run was not kept")
        return row
    finally:
        sim.stop()


def count_rejected(db: Path) -> int:
    try:
        with EventReader(db) as reader:
            return reader.rejected_count()
    except Exception:
        return 0


def sigstop(work: Path, rounds: int) -> Row:
    sim = start_simulator(backlog=3000, heartbeat=0.1, rotate_after=0.7, rate=0, burst_every=0)
    try:
        sim.faults(duplicate_every=9)
        row, db = Row("sigstop", rounds), work / "tenants" / "pg.sqlite3"
        cli = Cli(sim, work)
        wait_stored(db, 3000, cli)
        for _ in range(rounds):
            cli.proc.send_signal(signal.SIGSTOP)
            sim.emit(200)
            time.sleep(3 * STALL)
            sim.emit(100)
            cli.proc.send_signal(signal.SIGCONT)
            row.recovery.append(wait_stored(db, int(sim.stats()["events"]), cli))
        cli.stop()
        return account(row, sim, db)
    finally:
        sim.stop()


def network(work: Path, rounds: int) -> Row:
    sim = start_simulator(backlog=2000, heartbeat=0.2, rotate_after=0.8, rate=0, burst_every=0)
    try:
        row, db = Row("network", rounds), work / "tenants" / "pg.sqlite3"
        cli = Cli(sim, work)
        wait_stored(db, 2000, cli)
        knobs = [
            {"drop_mid_frame": 1},
            {"stall": 1},
            {"http_5xx": 2},
            {"http_429": 1},
            {"malformed": "bad_json"},
            {"duplicate_every": 5},
        ]
        for i in range(rounds):
            knob = knobs[i % len(knobs)]
            row.injected += "malformed" in knob
            sim.faults(fault_after=5, **knob)
            time.sleep(1.0)  # the next rotation takes the knob
            sim.emit(100)
            row.recovery.append(wait_stored(db, int(sim.stats()["events"]), cli, limit=90))
        cli.stop()
        return account(row, sim, db)
    finally:
        sim.stop()


def restart(work: Path, rounds: int) -> Row:
    options: dict[str, Any] = {
        "backlog": 1000,
        "heartbeat": 0.2,
        "rate": 0,
        "burst_every": 0,
        "data_dir": work / "sim",
    }
    sim = start_simulator(**options)
    options["port"] = int(sim.auth_url.rsplit(":", 1)[1])
    row, db = Row("restart", rounds), work / "tenants" / "pg.sqlite3"
    cli = Cli(sim, work)
    try:
        wait_stored(db, 1000, cli)
        for _ in range(rounds):
            sim.stop()
            time.sleep(1.5)
            sim = start_simulator(**options)
            back = time.monotonic()
            sim.emit(100)
            wait_stored(db, int(sim.stats()["events"]), cli, limit=60)
            row.recovery.append(time.monotonic() - back)
        cli.stop()
        return account(row, sim, db)
    finally:
        sim.stop()


def _settled_fds(proc: psutil.Process, db: Path, quiet: float = 1.0, limit: float = 30.0) -> int:
    """The stream's open fds once its database connections (writer, readers, indexer) stop changing for `quiet`
    seconds: the baseline a leak is measured from (sockets come and go with every rotation)."""
    seen, since, deadline = -1, time.monotonic(), time.monotonic() + limit
    while time.monotonic() < deadline:
        now = sum(f.path == str(db) for f in proc.open_files())
        if now != seen:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.1)
    return proc.num_fds()


def soak(
    work: Path,
    seconds: float,
    day_fraction: float,
    trace_python: bool = False,
    memory_log: Path | None = None,
) -> Row:
    """A day of the real service compressed into `seconds` (or `day_fraction` of a day for --quick)."""
    events, rotations = 86_400 * day_fraction, 288 * day_fraction
    sim = start_simulator(
        backlog=0, heartbeat=0.2, rate=events / seconds, burst_every=0, rotate_after=seconds / rotations
    )
    try:
        row, db = Row("soak", int(rotations)), work / "tenants" / "pg.sqlite3"
        samples = work / "memory.jsonl"
        probe = ["--out", str(samples), "--every", f"{max(1.0, seconds / 30):g}"]
        if trace_python:
            probe += ["--tracemalloc", "--settle", f"{seconds / 5:g}"]
        cli = Cli(sim, work, probe)
        wal_watch = WalWatch(db)
        me = psutil.Process(cli.proc.pid)
        while cli.connected is None and cli.proc.poll() is None and time.monotonic() - cli.started < 30:
            time.sleep(0.05)  # fds and RSS "at the start" are those of a running stream, database open
        time.sleep(min(5.0, seconds / 10))
        fd0 = _settled_fds(me, db)  # a busy machine opens the readers and the indexer's connection later
        start, rss0 = time.monotonic() - cli.started, me.memory_info().rss / 2**20
        pending: list[tuple[float, int]] = []
        end, next_drop, next_sample = time.monotonic() + seconds, 0.0, 0.0
        drop_every = seconds / (48 * day_fraction)
        while time.monotonic() < end:
            now = time.monotonic()
            if cli.proc.poll() is not None:
                raise RuntimeError(f"stream exited {cli.proc.returncode}: {''.join(cli.err[-5:])}")
            if now >= next_drop:
                sim.faults(drop_mid_frame=1, fault_after=10)
                next_drop = now + drop_every
            if now >= next_sample:
                pending.append((now, int(sim.stats()["events"])))
                next_sample = now + 1.0
            stored = count(db)
            while pending and stored >= pending[0][1]:
                row.recovery.append(time.monotonic() - pending.pop(0)[0])
            time.sleep(0.1)
        fd1 = me.num_fds()
        connections = sum(f.path == str(db) for f in me.open_files())
        cli.proc.send_signal(signal.SIGUSR1)  # mem_probe: sample, malloc_trim(0), sample
        deadline = time.monotonic() + 10
        while '"after"' not in samples.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        sim.faults(paused=True)  # live generation stops: the last sample is the full total
        row.recovery.append(wait_stored(db, int(sim.stats()["events"]), cli, limit=60))
        row.wal_max = wal_watch.stop()
        cli.stop()
        if memory_log is not None:
            shutil.copy(samples, memory_log)
        lines, row.memory = soak_memory.report(
            soak_memory.read_samples(samples),
            *soak_memory.cache_bound(db),
            connections,
            start=start - 0.5,
            start_rss=rss0,
        )
        for line in lines:
            print(f"soak: {line}", file=sys.stderr, flush=True)
        row.fds = (fd0, fd1)
        return account(row, sim, db)
    finally:
        sim.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI size: 10 kill rounds, a compressed 3-hour soak")
    ap.add_argument("--rounds", type=int, help="SIGKILL rounds (default 100, --quick 10)")
    ap.add_argument("--soak-seconds", type=float, help="wall time of the soak (default 600, --quick 30)")
    ap.add_argument("--only", nargs="*", default=None, help="run only these scenarios")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument(
        "--trace-python", action="store_true", help="soak: also trace Python allocations (slower)"
    )
    ap.add_argument("--memory-log", type=Path, help="soak: keep the CLI's memory samples (JSON lines) here")
    args = ap.parse_args()
    rounds = args.rounds or (10 if args.quick else 100)
    soak_s = args.soak_seconds or (30.0 if args.quick else 600.0)
    plan: dict[str, Callable[[Path], Row]] = {
        "sigkill": lambda w: sigkill(w, rounds, args.seed),
        "sigstop": lambda w: sigstop(w, 2 if args.quick else 10),
        "network": lambda w: network(w, 6 if args.quick else 24),
        "restart": lambda w: restart(w, 1 if args.quick else 5),
        "soak": lambda w: soak(w, soak_s, 1 / 8 if args.quick else 1.0, args.trace_python, args.memory_log),
        "hub": lambda w: proving_hub.hub(w, 3 if args.quick else 15, args.seed, account, count),
    }
    rows = []
    for name, run in plan.items():
        if args.only and name not in args.only:
            continue
        started = time.monotonic()
        with TemporaryDirectory(prefix=f"proving-{name}-") as tmp:
            rows.append(run(Path(tmp)))
        print(f"{name}: done in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    size = "quick" if args.quick else "full"
    print(
        f"Proving ground ({size}: {rounds} SIGKILL rounds, soak {soak_s:.0f} s), {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print(table(rows))
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
