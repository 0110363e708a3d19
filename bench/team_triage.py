"""Triage propagation on a team hub: one viewer acknowledges an alert, 20 other viewers see it.

A real nats-server with the documented configuration (packaging/nats/hub.conf + accounts.conf) on this machine;
the viewers are 20 connections of the example users `viewer2` (each watching the tenant's triage bucket as the
app does, hub/triage.py), the writer is `viewer`. Each round puts one entry and measures from just before the
put to each viewer's watch delivering it. Goal p95 < 1 s.

    .venv/bin/python bench/team_triage.py --rounds 50 --viewers 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.nats_hub import start_single


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(hub: object, rounds: int, viewers: int) -> list[float]:
    from tenant_events.hub.connection import HubAuth, HubOptions, connect
    from tenant_events.hub.provision import StreamPlan, provision
    from tenant_events.hub.subjects import HubNames
    from tenant_events.hub.triage import TriageBoard, alert_key

    names = HubNames("bench")
    urls = tuple(hub.urls.split(","))  # type: ignore[attr-defined]
    creds = hub.credentials  # type: ignore[attr-defined]

    def options(user: str) -> HubOptions:
        return HubOptions(urls, HubAuth("password", user, getattr(creds, user)))

    collector = await connect(options("collector"), reconnect=False)
    await provision(collector.jetstream(), names, StreamPlan())
    writer_nc = await connect(options("viewer"), reconnect=False)
    writer = await TriageBoard.open(writer_nc.jetstream(), names, options("viewer").auth)
    watchers = []
    arrived: dict[str, list[float]] = {}
    for _ in range(viewers):
        nc = await connect(options("viewer2"), reconnect=False)
        board = await TriageBoard.open(nc.jetstream(), names, options("viewer2").auth)
        board.on_change.append(lambda e: arrived.setdefault(e.alert, []).append(time.monotonic()))
        await board.start()
        watchers.append((nc, board))
    samples: list[float] = []
    for i in range(rounds):
        alert = alert_key("mass-deletion", f"evt_round{i}")
        started = time.monotonic()
        await writer.put(alert, "acknowledged", "looking into it")
        deadline = started + 10
        while len(arrived.get(alert, [])) < viewers and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.005)
        samples += [t - started for t in arrived.get(alert, [])]
        await asyncio.sleep(0.05)
    for nc, board in watchers:
        await board.stop()
        await nc.close()
    await writer_nc.close()
    await collector.close()
    return samples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--viewers", type=int, default=20)
    args = ap.parse_args()
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    hub = start_single(Path(tempfile.mkdtemp(prefix="bench-triage-")))
    try:
        samples = asyncio.run(measure(hub, args.rounds, args.viewers))
    finally:
        hub.stop()
    ms = [s * 1000 for s in samples]
    expected = args.rounds * args.viewers
    print(f"\ntriage propagation, {args.rounds} entries × {args.viewers} viewers (ms):")
    print("| n | p50 | p95 | max |\n|---:|---:|---:|---:|")
    print(f"| {len(ms)} | {statistics.median(ms):.0f} | {_percentile(ms, 0.95):.0f} | {max(ms):.0f} |")
    if len(ms) < expected:
        print(f"only {len(ms)} of {expected} deliveries arrived", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
