"""The webhook leg of bench/alerts.py (--webhook): each stored alert goes through the delivery worker and Apprise
to a JSON webhook on this machine, as `tenant-events stream` sends it.

  stored→webhook  from the runner handing the stored alert to its callbacks (committed, evaluated, stored with
                  its outbox row) to the receiver reading the POST; goal p95 < 500 ms
  event→webhook   from the simulator writing the event to the same moment
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class _Receiver(BaseHTTPRequestHandler):
    arrived: ClassVar[dict[str, float]] = {}

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        _Receiver.arrived[json.loads(data)["dedup_key"]] = time.time()
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_: Any) -> None:
        pass


def start_webhook(monitor: Any, runner: Any, got: dict[str, list[float]], event_seconds: Any) -> Any:
    """Deliver `monitor`'s alerts to a local webhook; returns an async `finish(rounds)` that waits for the
    deliveries, records the latencies in `got` and stops everything."""
    from tenant_events.destinations.registry import make_destination
    from tenant_events.destinations.worker import DeliveryWorker, Target

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"json://127.0.0.1:{server.server_address[1]}/hook"
    profile = make_destination("bench", url, severities=["info", "warning", "critical"])
    target = Target(profile, url, profile.fingerprint)
    worker = DeliveryWorker(monitor.database_file, lambda: {"bench": target})
    task = asyncio.ensure_future(worker.run())
    stored: dict[str, tuple[float, float]] = {}

    def on_alerts(result: Any) -> None:
        now = time.time()
        for alert in result.raised:
            stored[f"tenant-events:{monitor.database_file.stem}:{alert.id}:1"] = (
                now,
                event_seconds(alert.last_time),
            )
        worker.kick()

    runner.on_alerts.append(on_alerts)

    async def finish(rounds: int) -> None:
        deadline = time.monotonic() + 20
        while len(_Receiver.arrived) < rounds and time.monotonic() < deadline:  # noqa: ASYNC110  # another thread
            await asyncio.sleep(0.05)
        for key, (at, event_at) in stored.items():
            if key in _Receiver.arrived:
                got["stored→webhook"].append(_Receiver.arrived[key] - at)
                got["event→webhook"].append(_Receiver.arrived[key] - event_at)
        await worker.close()
        await task
        server.shutdown()

    got["stored→webhook"], got["event→webhook"] = [], []
    return finish
