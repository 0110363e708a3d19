"""The proving ground in one command (issue 9 "Must show"): faults against the real CLI and the real simulator,
then one table — rounds, events sent, stored, lost, duplicated, rejected, max recovery time, RSS and open
file descriptors at start and end.

    .venv/bin/python bench/proving_ground.py           # full: 100 SIGKILL rounds, compressed 24-hour soak
    .venv/bin/python bench/proving_ground.py --quick   # CI-sized: 10 rounds, a compressed 3-hour soak

Scenarios (each on its own simulator and data dir; the CLI is `python -m tenant_events stream`):
  sigkill   the CLI SIGKILLed at a random moment each round (start-up, catch-up, live), restarted; the server
            rotates connections, re-sends duplicates, and each round's first connection carries one malformed
            message (bad JSON / bad envelope / unknown kind, in turn). Recovery = restart → stream connected.
  sigstop   SIGSTOP for 3× the stall timeout while events arrive, then SIGCONT. Recovery = SIGCONT → every
            event stored (issue 9: live again within 1 s).
  network   drop mid-frame, stall, 5xx, 429 on successive connections. Recovery = emit → stored.
  restart   the simulator stopped and started again on the same port and data dir. Recovery = restart → stored.
  soak      24 hours compressed: 86,400 events (1/s for a day) and 288 rotations (the real service rotates about
            every 5 min), a drop every 30 compressed minutes. Recovery = worst time for a sampled total to be
            stored. The CLI runs under bench/mem_probe.py (same command, one sampling thread added), so besides
            RSS and fds the soak prints where the memory is — SQLite's page cache, glibc's heap in use and freed,
            the rest — and its RSS at the start, once SQLite's cache is full ("warm") and at the end; see
            bench/soak_memory.py. The row fails if memory other than freed heap grows after warm-up by more than
            soak_memory.LIVE_GROWTH_LIMIT_MB, or fds end above start + FD_SLACK.
  hub       the team hub: a 3-node NATS JetStream cluster (packaging/nats/cluster.conf), two `relay`s and one
            `stream --hub` viewer; each round SIGKILLs the streaming relay mid-stream and restarts it (every third
            round the viewer instead). The tenant allows one connection, so a second relay streaming at once
            would be refused. Recovery = kill → the standby leading (or the viewer reading again). Counts are the
            viewer's export against the simulator.

"lost" counts events the simulator holds that the export lacks; "duplicated" counts ids exported more than once;
order is checked against a bare SSE read of the simulator. "rejected" is kept/injected: under SIGKILL a malformed
message received in the last instants before the kill is never committed, and the server (like the real one
after a glitch) does not resend it, so kept ≤ injected there; every other scenario must keep all of them.
Exit status 1 if any scenario loses, duplicates or reorders an event, or the soak's memory or fds grow.
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
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import psutil

import soak_memory  # bench/, next to this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.fixtures_engine import OLD, reference_ids  # noqa: E402
from tenant_events.simulator.testing import SimulatorHandle, start_simulator  # noqa: E402
from tenant_events.store import EventReader  # noqa: E402

MALFORMED = ("bad_json", "bad_envelope", "unknown_kind")
STALL = 1.0  # the CLI's --stall-timeout in every scenario
FD_SLACK = 2  # the soak's fds at the end may exceed the start by this much (a rotation's sockets in flight)


@dataclass
class Row:
    scenario: str
    rounds: int = 0
    sent: int = 0
    stored: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: bool = False
    rejected: int = 0
    injected: int = 0
    recovery: list[float] = field(default_factory=list)
    memory: soak_memory.Verdict | None = None
    fds: tuple[int, int] | None = None

    @property
    def flat(self) -> bool:
        """Handles: at most FD_SLACK more than at the start; memory: soak_memory.Verdict."""
        fds_ok = self.fds is None or self.fds[1] <= self.fds[0] + FD_SLACK
        return fds_ok and (self.memory is None or self.memory.flat)

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.duplicated == 0 and not self.out_of_order and self.flat


class Cli:
    """One `tenant-events stream` process; a thread notes when it reports being connected."""

    def __init__(self, sim: SimulatorHandle, data: Path, probe: list[str] | None = None) -> None:
        """`probe`: run the CLI under bench/mem_probe.py with these probe options (same command, same process)."""
        env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=24 * 3600)}
        entry = [str(ROOT / "bench" / "mem_probe.py"), *probe, "--"] if probe else ["-m", "tenant_events"]
        args = [sys.executable, *entry, "stream", "--base-url", sim.base_url, "--name", "pg",
                "--data-dir", str(data), "--from-timestamp", OLD, "--stall-timeout", str(STALL)]  # fmt: skip
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
            if self.connected is None and (": live:" in line or ": catching up:" in line):
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
        knobs = [{"drop_mid_frame": 1}, {"stall": 1}, {"http_5xx": 2}, {"http_429": 1},
                 {"malformed": "bad_json"}, {"duplicate_every": 5}]  # fmt: skip
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
    options: dict[str, Any] = {"backlog": 1000, "heartbeat": 0.2, "rate": 0, "burst_every": 0,
                               "data_dir": work / "sim"}  # fmt: skip
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


def soak(work: Path, seconds: float, day_fraction: float, trace_python: bool = False,
         memory_log: Path | None = None) -> Row:  # fmt: skip
    """A day of the real service compressed into `seconds` (or `day_fraction` of a day for --quick)."""
    events, rotations = 86_400 * day_fraction, 288 * day_fraction
    sim = start_simulator(backlog=0, heartbeat=0.2, rate=events / seconds, burst_every=0,
                          rotate_after=seconds / rotations)  # fmt: skip
    try:
        row, db = Row("soak", int(rotations)), work / "tenants" / "pg.sqlite3"
        samples = work / "memory.jsonl"
        probe = ["--out", str(samples), "--every", f"{max(1.0, seconds / 30):g}"]
        if trace_python:
            probe += ["--tracemalloc", "--settle", f"{seconds / 5:g}"]
        cli = Cli(sim, work, probe)
        me = psutil.Process(cli.proc.pid)
        while cli.connected is None and cli.proc.poll() is None and time.monotonic() - cli.started < 30:
            time.sleep(0.05)  # fds and RSS "at the start" are those of a running stream, database open
        time.sleep(min(5.0, seconds / 10))
        fd0, start, rss0 = me.num_fds(), time.monotonic() - cli.started, me.memory_info().rss / 2**20
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
        cli.stop()
        if memory_log is not None:
            shutil.copy(samples, memory_log)
        lines, row.memory = soak_memory.report(soak_memory.read_samples(samples), *soak_memory.cache_bound(db),
                                               connections, start=start - 0.5, start_rss=rss0)  # fmt: skip
        for line in lines:
            print(f"soak: {line}", file=sys.stderr, flush=True)
        row.fds = (fd0, fd1)
        return account(row, sim, db)
    finally:
        sim.stop()


def leader_index(relays: list[Any]) -> int:
    """Which relay streams now (waiting while the first one starts)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        leading = [i for i, r in enumerate(relays)
                   if r.proc.poll() is None and r.count("leader: holds") > r.count("standby: lost")]  # fmt: skip
        if len(leading) == 1:
            return leading[0]
        time.sleep(0.05)
    raise RuntimeError("no single relay streams: " + " | ".join(r.text()[-300:] for r in relays))


def hub(work: Path, rounds: int, seed: int) -> Row:
    from helpers.hub_cli import HubCli
    from helpers.nats_hub import start_cluster

    rng = random.Random(seed)
    cluster = start_cluster(work / "nats")
    sim = start_simulator(
        backlog=2000, heartbeat=0.1, rotate_after=0.7, rate=40, burst_every=0, max_connections=1
    )
    token, pw = sim.mint_token(ttl=24 * 3600), cluster.credentials
    common = ["--hub", cluster.urls, "--hub-tenant", "pg", "--name", "pg"]

    def relay(data: Path) -> HubCli:
        return HubCli("relay", "--base-url", sim.base_url, "--data-dir", str(data), "--from-timestamp", OLD,
                      "--stall-timeout", str(STALL), "--hub-user", "collector", "--lease-seconds", "2", *common,
                      env={"TENANT_EVENTS_ACCESS_TOKEN": token, "TENANT_EVENTS_HUB_PASSWORD": pw.collector})  # fmt: skip

    def viewer() -> HubCli:
        return HubCli("stream", "--data-dir", str(work / "viewer"), "--hub-user", "viewer", *common,
                      env={"TENANT_EVENTS_HUB_PASSWORD": pw.viewer})  # fmt: skip

    row, db = Row("hub", rounds), work / "viewer" / "tenants" / "pg.sqlite3"
    relays, reader = [relay(work / "relay-a"), relay(work / "relay-b")], viewer()
    try:
        for i in range(rounds):
            time.sleep(rng.uniform(0.5, 2.0))
            started = time.monotonic()
            if i % 3 == 2:  # the viewer
                reader.kill()
                reader = viewer()
                reader.wait_for(": live:")
            else:
                index = leader_index(relays)
                relays[index].kill()
                standby = relays[1 - index]
                standby.wait_for("leader: holds", times=standby.count("leader: holds") + 1, timeout=30)
                relays[index] = relay(work / f"relay-{i}")
            row.recovery.append(time.monotonic() - started)
        sim.faults(paused=True)  # live events stop: the viewer must end up with every one
        total, deadline = int(sim.stats()["events"]), time.monotonic() + 60
        while count(db) < total and time.monotonic() < deadline:
            time.sleep(0.05)
        if any("too many" in r.text() for r in relays):
            raise RuntimeError("a second relay connected to the tenant while the first one streamed")
    finally:
        for proc in [*relays, reader]:
            if proc.proc.poll() is None:
                proc.stop()
        cluster.stop()
    try:
        return account(row, sim, db)
    finally:
        sim.stop()


def table(rows: list[Row]) -> str:
    head = ("scenario", "rounds", "sent", "stored", "lost", "dup", "order", "rejected kept/inj",
            "max recovery s", "RSS start/warm→end MiB", "fds start→end")  # fmt: skip
    lines = [head]
    for r in rows:
        lines.append((r.scenario, str(r.rounds), str(r.sent), str(r.stored), str(r.lost), str(r.duplicated),
                      "BAD" if r.out_of_order else "ok", f"{r.rejected}/{r.injected}",
                      f"{max(r.recovery):.2f}" if r.recovery else "-",
                      memory_cell(r.memory) if r.memory else "-",
                      f"{r.fds[0]}→{r.fds[1]}" if r.fds else "-"))  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
           for line in lines]  # fmt: skip
    out.insert(1, "-" * len(out[0]))
    return "\n".join(out)


def memory_cell(m: soak_memory.Verdict) -> str:
    warm = f"/{m.warm:.0f}" if m.warm is not None else "/-"
    return f"{m.start:.0f}{warm}→{m.end:.0f}" + ("" if m.flat else " GROWING")


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
        "hub": lambda w: hub(w, 3 if args.quick else 15, args.seed),
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
