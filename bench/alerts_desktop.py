"""The desktop path of bench/alerts.py (`--desktop`): the app's own alert wiring on a qasync loop, measured to
the notification daemon's bus.

    simulator writes the event ─▶ stream engine ─▶ store ─▶ runner (tenant/alert_rules.AlertRules, what each
    tenant link of the app runs) ─▶ AlertNotes (planner, urgency) ─▶ Notifier.show (desktop-notifier) ─▶ D-Bus Notify

Points measured from the event's own `time` (ms precision):
  app       the evaluation step reaches AlertNotes on the Qt thread (committed, evaluated, stored)
  sent      Notifier.show returned: the daemon answered the Notify call
  bus       the Notify call on the session bus, by the bus monitor's own timestamp (`dbus-monitor` header
            `time=`): the moment the daemon was asked to show it
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

import sim_process

_TIME = re.compile(r"time=(\d+\.\d+)")


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class BusWatch:
    """Timestamps of Notify calls whose summary starts with `title`, as the bus monitor saw them."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.times: list[float] = []
        self.proc = subprocess.Popen(
            [
                "dbus-monitor",
                "--session",
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        at: float | None = None
        strings = 0
        for line in self.proc.stdout:
            if line.startswith(("signal ", "method call ")):
                self.ready.set()
                found = _TIME.search(line)
                at = float(found.group(1)) if found and "member=Notify" in line else None
                strings = 0
            elif at is not None and line.startswith("   string "):
                strings += 1
                if strings == 3:  # app name, icon, summary
                    if line.strip().removeprefix('string "').startswith(self.title):
                        self.times.append(at)
                    at = None

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


async def measure_desktop(auth_url: str, rounds: int, gap: float) -> dict[str, list[float]]:
    from tenant_events.alert_settings import AlertSettings
    from tenant_events.alerts.evaluator import StepResult
    from tenant_events.monitor import TenantMonitor
    from tenant_events.paths import AppPaths
    from tenant_events.settings import NotificationSettings
    from tenant_events.stream.engine import EngineConfig
    from tenant_events.stream.tokens import StaticTokenProvider
    from tenant_events.tenant.alert_rules import AlertRules
    from tenant_events.ui.alerts.alert_notes import AlertNotes
    from tenant_events.ui.alerts.desktop_notifier import Notifier

    only = [{"id": r, "enabled": False} for r in ("mass-deletion", "off-hours")]  # one alert per deletion
    settings = AlertSettings(rules=[{"id": "org-deleted", "coalesce_minutes": 0}, *only])
    paths = AppPaths.resolve(Path(tempfile.mkdtemp(prefix="bench-alerts-desktop-"))).ensure()
    watch = BusWatch("Organization deleted")
    if not watch.ready.wait(10):
        raise SystemExit("dbus-monitor did not start")
    notifier = Notifier()
    await notifier.probe()  # the app probes the daemon once, at its first notification
    notes = AlertNotes(notifier, NotificationSettings())
    event_times: list[float] = []
    got: dict[str, list[float]] = {"app": [], "sent": [], "bus": []}

    def on_step(tenant: str, result: StepResult) -> None:
        now = time.time()
        for alert in result.raised:
            event_times.append(_seconds(alert.last_time))
            got["app"].append(now - event_times[-1])
        notes.offer(tenant, result)

    all_sent = asyncio.Event()

    def delivered(_title: str, _how: str) -> None:
        got["sent"].append(time.time() - event_times[len(got["sent"])])
        if len(got["sent"]) >= rounds:
            all_sent.set()

    notifier.delivered.connect(delivered)
    monitor = TenantMonitor(
        "bench",
        paths,
        EngineConfig(auth_url + "/api/v2", name="bench"),
        StaticTokenProvider(sim_process.admin_token(auth_url)),
    )
    live = asyncio.Event()
    monitor.on_state.append(lambda change: live.set() if change.state.value == "live" else None)
    await monitor.start()
    AlertRules("bench", settings, [lambda step: on_step("bench", step)], strict=False).attach(monitor)
    try:
        async with httpx.AsyncClient(base_url=auth_url, timeout=30) as admin:
            await asyncio.wait_for(live.wait(), 30)
            for _ in range(rounds):
                (await admin.post("/_sim/scenario", json={"do": "org_deleted"})).raise_for_status()
                await asyncio.sleep(gap)
        with contextlib.suppress(TimeoutError):  # missing ones are reported by alerts.py
            await asyncio.wait_for(all_sent.wait(), 10)
        await asyncio.sleep(0.3)  # the monitor's reader thread has printed the last Notify calls by now
    finally:
        await monitor.stop()
        await notes.close()
        watch.close()
    got["bus"] = [at - ev for at, ev in zip(watch.times, event_times, strict=False)]
    return got


def run_desktop(auth_url: str, rounds: int, gap: float) -> dict[str, Any]:
    """On a qasync loop over a QApplication, as the app runs (CONTRIBUTING.md "Style")."""
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        return runner.run(measure_desktop(auth_url, rounds, gap))
