"""What the rules' process does to stay cheap keeps what it reports true: the alerts a step reports are the
alerts as stored, and the process runs Python's cycle collector seldom (alerts/gc_policy.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.alert_events import clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, gc_policy, load_rules
from tenant_events.store import Batch, StoreWriter


def test_every_alert_a_step_reports_is_the_alert_as_stored(tmp_path):
    rules = load_rules([], BUILTIN_RULES).rules
    hours = WorkingHours(start="08:00", end="18:00", timezone="UTC")
    engine = RuleEngine(rules, hours=hours, profile="demo", catch_up_after_s=300, clock=clock_at(8 * 3600))
    evaluator = Evaluator(engine)
    writer = StoreWriter(tmp_path / "demo.sqlite3")

    def step_as_stored(rows: list) -> list:
        writer.commit_sync(Batch(events=rows, cursor=f"c{rows[0].event_id}"))
        result = writer.run_alert_job(evaluator.step).result()
        stored = writer.run_alert_job(lambda ledger: ledger.alerts_by_id([a.id for a in result.alerts]))
        assert result.alerts == [stored.result()[a.id] for a in result.alerts]
        return result.alerts

    try:
        # a catch-up: single-event, threshold and grouped alerts (one per organization)
        rows = [event("group.role.assigned", 60 * i, role="admin") for i in range(5)]
        rows += [event("user.deleted", 3600 + i) for i in range(25)]
        rows += [event("organization.connection.added", 4000 + i, org=f"org_{i:016}") for i in range(30)]
        caught_up = step_as_stored(rows)
        assert len(caught_up) > 30 and {a.rule_id for a in caught_up} >= {"admin-role", "mass-deletion"}
        # live: a new alert, and new versions of alerts raised before
        live = step_as_stored([event("group.role.assigned", 8 * 3600 - 5, role="admin")])
        assert live
    finally:
        writer.close()


def test_the_rules_process_runs_the_cycle_collector_seldom():
    code = (
        "import gc\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from tenant_events.alerts import evaluator_child\n"
        "evaluator_child.main(ThreadPoolExecutor(1))\n"  # (stdin empty: it starts and ends)
        "print(gc.get_threshold()[0], gc.get_freeze_count() > 0)\n"
    )
    desktop = Path(gc_policy.__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(desktop), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(gc_policy.YOUNG_PASS), "True"]
