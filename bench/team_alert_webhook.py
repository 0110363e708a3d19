"""Team-path delivery latency: a relay (`tenant-events relay --alerts-to`) on a real nats-server delivers each
organization deletion's alert to a JSON webhook on this machine, through the hub's shared outbox and Apprise.

  hub→webhook    from the hub storing the event (the team alert's raised_at: a relay takes an event's time from
                 the hub) to the receiver reading the POST. It holds the relay reading the event back from the
                 hub, storing it, evaluating, storing the alert and its outbox row, the shared-outbox checks and
                 the send: an upper bound of "alert stored → webhook"; goal p95 < 500 ms
  event→webhook  from the simulator writing the event to the same moment

The destination's URL goes to the keyring, so run it inside the test harness's session:

    ./run test --exec .venv/bin/python bench/team_alert_webhook.py --alerts 50
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from http.server import ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import sim_process
from alert_webhook import _Receiver
from helpers.hub_cli import HubCli
from helpers.nats_hub import start_single


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    from tenant_events.destinations.registry import make_destination, save_destination, slot
    from tenant_events.hub.team_alerts import team_dedup_key, team_key
    from tenant_events.paths import AppPaths
    from tenant_events.settings import load_settings, save_settings
    from tenant_events.store.alerts_inbox import AlertInbox
    from tenant_events.tenant.sign_in import open_secret_store

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--alerts", type=int, default=50, help="alerting events to send")
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between them")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="team-webhook-bench-"))
    hub = start_single(tmp / "nats")
    sim, auth_url = sim_process.start_simulator(0, "--heartbeat", "1")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"json://127.0.0.1:{server.server_address[1]}/hook"
    data = tmp / "relay"
    paths = AppPaths.resolve(str(data)).ensure()
    store = open_secret_store().store
    name = f"bench-{uuid.uuid4().hex[:8]}"
    save_destination(
        paths, store, make_destination(name, url, severities=["info", "warning", "critical"]), url
    )
    settings = load_settings(paths)
    only = [{"id": r, "enabled": False} for r in ("mass-deletion", "off-hours")]  # one alert per deletion
    settings.alerts.rules = [{"id": "org-deleted", "coalesce_minutes": 0}, *only]
    save_settings(paths, settings)
    relay = HubCli(
        "relay",
        "--base-url",
        auth_url + "/api/v2",
        "--name",
        "acme",
        "--data-dir",
        str(data),
        "--hub",
        hub.urls,
        "--hub-tenant",
        "acme",
        "--hub-user",
        "collector",
        "--alerts-to",
        name,
        env={
            "TENANT_EVENTS_ACCESS_TOKEN": sim_process.admin_token(auth_url),
            "TENANT_EVENTS_HUB_PASSWORD": hub.credentials.collector,
        },
    )
    try:
        relay.wait_for("alerts: evaluating the team's alerts", timeout=60)
        with httpx.Client(base_url=auth_url, timeout=30) as admin:
            for _ in range(args.alerts):
                admin.post("/_sim/scenario", json={"do": "org_deleted"}).raise_for_status()
                time.sleep(args.gap)
        deadline = time.monotonic() + 120
        while len(_Receiver.arrived) < args.alerts and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        code = relay.stop()
        server.shutdown()
        store.delete(slot(paths, name))
        hub.stop()
        sim.terminate()
        sim.wait(10)
    with AlertInbox(paths.database_file("acme-team")) as inbox:
        stored = inbox.alerts()
    got: dict[str, list[float]] = {"hub→webhook": [], "event→webhook": []}
    for alert in stored:
        arrived = _Receiver.arrived.get(
            team_dedup_key("acme", team_key(alert.rule_id, alert.first_event_id), 1)
        )
        if arrived is not None:
            got["hub→webhook"].append(arrived - alert.raised_at)
            got["event→webhook"].append(arrived - _seconds(alert.last_time))
    print(f"\nteam path, {len(stored)} alerts stored by the relay, {len(_Receiver.arrived)} received (ms):")
    print("| from | n | p50 | p95 | max |\n|---|---:|---:|---:|---:|")
    for what, values in got.items():
        if values:
            ms = [v * 1000 for v in values]
            print(
                f"| {what} | {len(ms)} | {statistics.median(ms):.0f} | {_percentile(ms, 0.95):.0f} | "
                f"{max(ms):.0f} |"
            )
    return 0 if code == 0 and len(got["hub→webhook"]) == args.alerts else 1


if __name__ == "__main__":
    sys.exit(main())
