"""Alert latency: from the simulator writing an alerting event to the alert reaching the core's callback, and
(with --notify, inside a desktop session) to the notification daemon answering its D-Bus `Notify` call.

The simulator runs in its own process; this one runs the stream engine and the store on one asyncio loop, and the
alert rules in their own process, as `tenant-events stream` does. Each round asks the simulator for one organization deletion
(POST /_sim/scenario) — a rule without a threshold, with coalescing off so every deletion is an alert of its
own — and measures from the event's own `time` (stamped by the simulator as it writes the event) to:

  callback  the runner hands the stored alert to its on_alerts callbacks (committed, evaluated, stored)
  notify    desktop-notifier's send() returned: the daemon accepted the Notify call (--notify only)
With --desktop the app's own wiring is measured instead, to the Notify call seen on the bus (alerts_desktop.py).

Event times carry milliseconds, so figures are ±1 ms. p50/p95 over --alerts rounds; goal p95 < 250 ms to the
notification.
With --webhook each alert is also delivered to a local JSON webhook (bench/alert_webhook.py): stored→webhook,
goal p95 < 500 ms.

    .venv/bin/python bench/alerts.py --alerts 50 --webhook
    ./run test --exec .venv/bin/python bench/alerts.py --alerts 50 --notify   # with a session bus and dunst
    ./run test --exec .venv/bin/python bench/alerts.py --alerts 50 --desktop  # the app's path, to the bus
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

import sim_process


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(
    auth_url: str, rounds: int, gap: float, notify: bool, webhook: bool = False
) -> dict[str, list[float]]:
    home = Path(tempfile.mkdtemp(prefix="bench-alerts-"))
    try:
        return await _measure_in(home, auth_url, rounds, gap, notify, webhook)
    finally:
        shutil.rmtree(home, ignore_errors=True)  # a bench run leaves nothing behind


async def _measure_in(
    home: Path, auth_url: str, rounds: int, gap: float, notify: bool, webhook: bool
) -> dict[str, list[float]]:
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.delivery import NotificationPlanner, QuietTimes
    from tenant_events.alerts.evaluator import StepResult
    from tenant_events.alerts.evaluator_process import attach
    from tenant_events.monitor import TenantMonitor
    from tenant_events.paths import AppPaths
    from tenant_events.settings import NotificationSettings
    from tenant_events.stream.engine import EngineConfig
    from tenant_events.stream.tokens import StaticTokenProvider

    only = [{"id": r, "enabled": False} for r in ("mass-deletion", "off-hours")]  # one alert per deletion
    settings = AlertSettings(rules=[{"id": "org-deleted", "coalesce_minutes": 0}, *only])
    paths = AppPaths.resolve(home).ensure()
    monitor = TenantMonitor(
        "bench",
        paths,
        EngineConfig(auth_url + "/api/v2", name="bench"),
        StaticTokenProvider(sim_process.admin_token(auth_url)),
    )
    live = asyncio.Event()
    monitor.on_state.append(lambda change: live.set() if change.state.value == "live" else None)
    await monitor.start()
    runner = attach(monitor, "bench", settings.model_dump_json(), by_received=False, resume=None)
    planner = NotificationPlanner(QuietTimes(NotificationSettings()))
    notifier: Any = None
    if notify:
        from desktop_notifier import DesktopNotifier, Urgency

        notifier = DesktopNotifier(app_name="Tenant Events bench")
        urgencies = {"low": Urgency.Low, "normal": Urgency.Normal, "critical": Urgency.Critical}
    got: dict[str, list[float]] = {"callback": []} | (
        {"notify": []} if notify else {}
    )  # only what is measured
    pending: set[asyncio.Task[None]] = set()
    done = asyncio.Event()

    def check_done() -> None:
        if len(got["callback"]) >= rounds and (notifier is None or len(got["notify"]) >= rounds):
            done.set()

    async def show(title: str, body: str, urgency: str, event_time: float) -> None:
        await notifier.send(title=title, message=body, urgency=urgencies[urgency], timeout=1000)
        got["notify"].append(time.time() - event_time)
        check_done()

    def on_alerts(result: StepResult) -> None:
        now = time.time()
        for alert in result.raised:
            got["callback"].append(now - _seconds(alert.last_time))
        if notifier is not None:
            for note, alert in zip(planner.offer(result), result.raised, strict=False):
                task = asyncio.ensure_future(
                    show(note.title, note.text("bench"), note.urgency, _seconds(alert.last_time))
                )
                pending.add(task)
                task.add_done_callback(pending.discard)
        check_done()

    runner.on_alerts.append(on_alerts)
    finish = None
    if webhook:
        from alert_webhook import start_webhook

        finish = start_webhook(monitor, runner, got, _seconds)
    async with httpx.AsyncClient(base_url=auth_url, timeout=30) as admin:
        await asyncio.wait_for(live.wait(), 30)
        for _ in range(rounds):
            (await admin.post("/_sim/scenario", json={"do": "org_deleted"})).raise_for_status()
            await asyncio.sleep(gap)
    with contextlib.suppress(TimeoutError):  # missing alerts are reported by main()
        await asyncio.wait_for(done.wait(), 10)
    if finish is not None:
        await finish(rounds)
    await monitor.stop()
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alerts", type=int, default=50, help="alerting events to send")
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between them")
    ap.add_argument(
        "--notify", action="store_true", help="also show each alert through the notification daemon"
    )
    ap.add_argument(
        "--webhook",
        action="store_true",
        help="also deliver each alert to a local JSON webhook through Apprise (bench/alert_webhook.py)",
    )
    ap.add_argument(
        "--desktop",
        action="store_true",
        help="through the desktop app's own alert wiring to the Notify call seen on the bus "
        "(bench/alerts_desktop.py; needs a session bus and a daemon)",
    )
    args = ap.parse_args()
    if (args.notify or args.desktop) and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise SystemExit("--notify needs a session bus: run it under ./run test --exec")
    print("load average at start:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    sim, auth_url = sim_process.start_simulator(0, "--heartbeat", "1")
    try:
        if args.desktop:
            from alerts_desktop import run_desktop

            got = run_desktop(auth_url, args.alerts, args.gap)
        else:
            got = asyncio.run(measure(auth_url, args.alerts, args.gap, args.notify, args.webhook))
    finally:
        sim.terminate()
        sim.wait(timeout=30)
    print(f"\nlatency from the simulator writing the event, {args.alerts} alerts (ms):")
    print("| to | n | p50 | p95 | max |")
    print("|---|---:|---:|---:|---:|")
    for name, values in got.items():
        if values:
            ms = [v * 1000 for v in values]
            print(
                f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {_percentile(ms, 0.95):.0f} | {max(ms):.0f} |"
            )
    last = got["stored→webhook"] if args.webhook else list(got.values())[-1]
    if len(last) < args.alerts:
        print(f"only {len(last)} of {args.alerts} alerts arrived", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
