"""Team hub: tenant→viewer latency with one collector and 50 viewers, and the collector's publish rate against
direct SSE ingest, all on this machine and in the same run.

  latency     the simulator at its own live rate (2 events/s, a burst of 25 every 30 s); one `tenant-events relay`
              into a nats-server (packaging/nats/hub.conf); --viewers HubViewers (each its own NATS connection,
              consumer and SQLite database) in --viewer-procs processes; and, as the peer, one StreamEngine
              reading the tenant directly. Latency = the moment an event is committed to a viewer's database
              minus the event's own `time` (set by the simulator when it made the event; same clock).
  throughput  a backlog of --events replayed by (a) StreamEngine → StoreWriter (bench/ingest.py's engine: the
              direct ingest), (b) StreamEngine → HubSink into one nats-server (R1), (c) the same into a 3-node
              JetStream cluster (R3). Each in its own process, order rotated per run; medians of --runs.
              events/s = all events acknowledged by the hub (or committed to SQLite) and the cursor after them
              stored, divided by the time since the consumer started.

    .venv/bin/python bench/hub.py                                   # 50 viewers, 60 s live; 100k events × 3
    .venv/bin/python bench/hub.py --viewers 10 --seconds 20 --events 20000 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sim_process

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.nats_hub import NatsHub, start_cluster, start_single  # noqa: E402
from tenant_events.store import Batch, CommitResult, CursorState, StoreWriter  # noqa: E402

OLD = "2000-01-01T00:00:00Z"
PASSWORD_ENV = "TENANT_EVENTS_HUB_PASSWORD"


class TimedWriter:
    """The viewer's StoreWriter, noting when each event's batch is committed (the BatchSink seam)."""

    def __init__(self, writer: StoreWriter, since_ms: list[int], samples: list[float]) -> None:
        self._writer, self._since, self.samples = writer, since_ms, samples

    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        times = [row.time_ms for row in batch.events if row.time_ms >= self._since[0]]
        future = self._writer.submit(batch)
        if times:
            future.add_done_callback(lambda _f: self.samples.extend(time.time() * 1000 - t for t in times))
        return future

    def cursor_state(self) -> CursorState:
        return self._writer.cursor_state()

    def duplicates_total(self) -> int:
        return self._writer.duplicates_total()

    def resume_after_failure(self) -> CursorState:
        return self._writer.resume_after_failure()


# -- children ---------------------------------------------------------------------------------------------------
def child_viewers(
    urls: str, password: str, count: int, seconds: float, start_after: float
) -> dict[str, object]:
    """`count` viewers; each reports the latencies of events made after `start_after` (epoch s)."""
    from tenant_events.hub.connection import HubAuth, HubOptions
    from tenant_events.hub.subjects import HubNames
    from tenant_events.hub.viewer import HubViewer, ViewerConfig

    async def go() -> dict[str, object]:
        tmp = Path(tempfile.mkdtemp(prefix="bench-hub-viewers-"))
        options = HubOptions(tuple(urls.split(",")), HubAuth("password", "viewer", password))
        since, per_viewer, writers, viewers, tasks = [int(start_after * 1000)], [], [], [], []
        for i in range(count):
            writer = StoreWriter(tmp / f"v{i}.sqlite3")
            samples: list[float] = []
            per_viewer.append(samples)
            viewer = HubViewer(
                ViewerConfig(options, HubNames("bench"), name=f"v{i}"), TimedWriter(writer, since, samples)
            )
            writers.append(writer)
            viewers.append(viewer)
            tasks.append(asyncio.create_task(viewer.run()))
        await asyncio.sleep(max(0.0, start_after - time.time()) + seconds)
        for viewer in viewers:
            viewer.stop()
        await asyncio.gather(*tasks)
        for writer in writers:
            writer.close()
        shutil.rmtree(tmp)
        return {"samples": [x for s in per_viewer for x in s], "per_viewer": [len(s) for s in per_viewer]}

    return asyncio.run(go())


def child_direct(auth_url: str, seconds: float, start_after: float) -> dict[str, object]:
    """The peer: one StreamEngine on the tenant itself, into SQLite."""
    from tenant_events.stream.engine import EngineConfig, StreamEngine
    from tenant_events.stream.tokens import StaticTokenProvider

    async def go() -> dict[str, object]:
        tmp = Path(tempfile.mkdtemp(prefix="bench-hub-direct-"))
        writer, samples = StoreWriter(tmp / "direct.sqlite3"), []
        engine = StreamEngine(
            EngineConfig(auth_url + "/api/v2", name="direct"),
            StaticTokenProvider(sim_process.admin_token(auth_url)),
            TimedWriter(writer, [int(start_after * 1000)], samples),
        )
        task = asyncio.create_task(engine.run())
        await asyncio.sleep(max(0.0, start_after - time.time()) + seconds)
        engine.stop()
        await task
        writer.close()
        shutil.rmtree(tmp)
        return {"samples": samples}

    return asyncio.run(go())


def child_ingest(
    kind: str, auth_url: str, n: int, urls: str, password: str, tenant: str
) -> dict[str, object]:
    """Catch up on n backlog events: `direct` into SQLite, `hub` into the hub at `urls`."""
    from tenant_events.hub.connection import HubAuth, HubOptions
    from tenant_events.hub.provision import StreamPlan
    from tenant_events.hub.relay import Relay, RelayConfig
    from tenant_events.hub.subjects import HubNames
    from tenant_events.stream.engine import EngineConfig
    from tenant_events.stream.tokens import StaticTokenProvider

    if kind == "direct":
        import ingest  # bench/ingest.py: the engine's own durable-ingest measurement

        seconds = ingest.consume_engine(auth_url, sim_process.admin_token(auth_url), n)
        return {"seconds": seconds}

    async def go() -> dict[str, object]:
        options = HubOptions(tuple(urls.split(",")), HubAuth("password", "collector", password))
        engine = EngineConfig(auth_url + "/api/v2", from_timestamp=OLD, name=tenant)
        relay = Relay(
            RelayConfig(engine, options, HubNames(tenant), StreamPlan()),
            StaticTokenProvider(sim_process.admin_token(auth_url)),
        )
        leading, done = asyncio.Event(), asyncio.Event()
        relay.on_role.append(lambda role, _m: leading.set() if role == "leader" else None)
        relay.on_state.append(lambda _s: None)
        task = asyncio.create_task(relay.run())
        await leading.wait()  # connected, stream made, lease held: the engine starts now
        started = time.perf_counter()
        assert relay.engine is not None
        relay.engine.on_commit.append(lambda _r: done.set() if relay.published >= n else None)
        await asyncio.wait([task, asyncio.create_task(done.wait())], return_when=asyncio.FIRST_COMPLETED)
        if not done.is_set():
            raise SystemExit(f"the relay ended early: {task.result()}")
        elapsed = time.perf_counter() - started  # every event acknowledged by the hub and its cursor stored
        relay.stop()
        await task
        return {"seconds": elapsed, "published": relay.published}

    return asyncio.run(go())


def spawn(*args: str, password: str = "") -> subprocess.Popen[str]:
    """A child of this script; the hub password goes in its environment, never on a command line."""
    env = {**os.environ, PASSWORD_ENV: password}
    return subprocess.Popen(
        [sys.executable, __file__, "--child", *args], stdout=subprocess.PIPE, text=True, env=env
    )


def result(proc: subprocess.Popen[str], timeout: float) -> dict[str, object]:
    out, _ = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"a child failed ({proc.returncode})")
    parsed: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return parsed


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# -- phases -----------------------------------------------------------------------------------------------------
def latency(args: argparse.Namespace, work: Path) -> None:
    hub = start_single(work / "nats-latency")
    sim, auth_url = sim_process.start_simulator(0, "--rate", "2", "--burst-every", "30", "--heartbeat", "15")
    relay = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "relay",
            "--base-url",
            auth_url + "/api/v2",
            "--name",
            "bench",
            "--data-dir",
            str(work / "relay"),
            "--hub",
            hub.urls,
            "--hub-user",
            "collector",
        ],
        env={
            **os.environ,
            "TENANT_EVENTS_ACCESS_TOKEN": sim_process.admin_token(auth_url),
            "TENANT_EVENTS_HUB_PASSWORD": hub.credentials.collector,
        },
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert relay.stderr is not None
        for line in relay.stderr:
            if ": leader:" in line:
                break
        threading_drain(relay)
        start_after = time.time() + 10.0  # viewers connect and catch up first; only later events count
        per_proc = [
            args.viewers // args.viewer_procs + (i < args.viewers % args.viewer_procs)
            for i in range(args.viewer_procs)
        ]
        children = [
            spawn(
                "viewers",
                hub.urls,
                str(n),
                str(args.seconds),
                str(start_after),
                password=hub.credentials.viewer,
            )
            for n in per_proc
            if n
        ]
        direct = spawn("direct", auth_url, str(args.seconds), str(start_after))
        limit = args.seconds + 120
        viewer_results = [result(c, limit) for c in children]
        direct_result = result(direct, limit)
    finally:
        relay.terminate()
        relay.wait(30)
        sim.terminate()
        sim.wait(30)
        hub.stop()
    samples = [float(x) for r in viewer_results for x in r["samples"]]  # type: ignore[attr-defined]
    counts = [int(c) for r in viewer_results for c in r["per_viewer"]]  # type: ignore[attr-defined]
    peer = [float(x) for x in direct_result["samples"]]  # type: ignore[attr-defined]
    print(f"\nlatency, {args.seconds:.0f} s of live events at the simulator's rate (2/s + 25 every 30 s):")
    print(
        f"  each of {len(counts)} viewers stored {min(counts)}–{max(counts)} of them; the direct peer {len(peer)}"
    )
    print("| tenant → stored | p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|")
    for name, values in ((f"via the hub ({len(counts)} viewers)", samples), ("direct (StreamEngine)", peer)):
        print(f"| {name} | {percentile(values, 50):.0f} | {percentile(values, 95):.0f} | {max(values):.0f} |")


def threading_drain(proc: subprocess.Popen[str]) -> None:
    import threading

    assert proc.stderr is not None
    stream = proc.stderr
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


def throughput(args: argparse.Namespace, work: Path) -> None:
    single, cluster = start_single(work / "nats-r1"), start_cluster(work / "nats-r3")
    sim, auth_url = sim_process.start_simulator(args.events, "--burst-every", "0", "--heartbeat", "1")
    hubs: dict[str, NatsHub | None] = {"direct": None, "hub R1": single, "hub R3": cluster}
    rates: dict[str, list[float]] = {k: [] for k in hubs}
    try:
        for run in range(args.runs):
            order = list(hubs)[run % 3 :] + list(hubs)[: run % 3]
            for kind in order:
                hub = hubs[kind]
                os.sync()
                child = spawn(
                    "ingest",
                    "direct" if hub is None else "hub",
                    auth_url,
                    str(args.events),
                    hub.urls if hub else "-",
                    f"run{run}",
                    password=hub.credentials.collector if hub else "",
                )
                r = result(child, 1800)
                rates[kind].append(args.events / float(r["seconds"]))  # type: ignore[arg-type]
                print(f"run {run + 1} {kind:7s} {rates[kind][-1]:>9,.0f} events/s", flush=True)
    finally:
        sim.terminate()
        sim.wait(30)
        single.stop()
        cluster.stop()
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"\ncollector throughput, medians of {args.runs} runs of {args.events:,} backlog events:")
    print("| consumer | events/s | vs direct |")
    print("|---|---:|---:|")
    for kind, value in med.items():
        print(f"| {kind} | {value:,.0f} | {value / med['direct']:.0%} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--viewers", type=int, default=50)
    ap.add_argument("--viewer-procs", type=int, default=5, help="processes the viewers are spread over")
    ap.add_argument("--seconds", type=float, default=60.0, help="live events measured for latency")
    ap.add_argument("--events", type=int, default=100_000, help="backlog for the throughput runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=("latency", "throughput"))
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        password = os.environ.get(PASSWORD_ENV, "")
        if kind == "viewers":
            out = child_viewers(rest[0], password, int(rest[1]), float(rest[2]), float(rest[3]))
        elif kind == "direct":
            out = child_direct(rest[0], float(rest[1]), float(rest[2]))
        else:
            out = child_ingest(rest[0], rest[1], int(rest[2]), rest[3], password, rest[4])
        print(json.dumps(out))
        return 0
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()), "(2 cores, shared)")
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp:
        if args.only in (None, "throughput"):
            throughput(args, Path(tmp))
        if args.only in (None, "latency"):
            latency(args, Path(tmp))
    print("load average at end:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
