"""Exactly once for the correlation rules: a sequence, a distinct count and a group-by threshold evaluated by
`tenant-events stream` over a simulator backlog, SIGKILLed in the middle of evaluating it, restarted, with
duplicate deliveries — and the alerts come out exactly as one uninterrupted evaluation of the same stored
events gives them (their state is rebuilt from the store after the kill)."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3

import pytest

from helpers.stream_kill import kill_then_catch_up
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts import BUILTIN_RULES
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.store import StoreWriter

RULES = [
    {
        "id": "join-and-leave",
        "name": "Joined and left",
        "severity": "info",
        "types": ["organization.member.added", "organization.member.deleted"],
        "group_by": ["object.organization.id", "object.user.user_id"],
        "sequence": {
            "steps": [{"types": ["organization.member.added"]}, {"types": ["organization.member.deleted"]}],
            "within_seconds": 3600,
        },
    },
    {
        "id": "many-users-one-client",
        "name": "Users deleted by one client",
        "severity": "info",
        "types": ["user.deleted"],
        "group_by": ["context.client.id"],
        "threshold": {"count": 3, "window_seconds": 600, "distinct": "object.user_id"},
    },
    {
        "id": "busy-group",
        "name": "Busy group",
        "severity": "info",
        "types": ["group.member.added"],
        "group_by": ["object.group.id"],
        "threshold": {"count": 3, "window_seconds": 900},
    },
]
OURS = [r["id"] for r in RULES]


def _per_rule(db):
    conn = sqlite3.connect(db)
    try:
        counts = dict(conn.execute("SELECT rule_id, sum(event_count) FROM alerts GROUP BY 1").fetchall())
        shared = conn.execute(
            "SELECT count(*) FROM (SELECT a.rule_id, e.seq FROM alert_events e JOIN alerts a"
            " ON a.id = e.alert_id GROUP BY 1, 2 HAVING count(*) > 1)"
        ).fetchone()[0]
    finally:
        conn.close()
    return {r: counts.get(r, 0) for r in OURS}, shared


def _uninterrupted(db, tmp_path):
    """The same stored events evaluated once, from scratch, by the same rules: the oracle."""
    copy = tmp_path / "oracle.sqlite3"
    shutil.copy(db, copy)
    conn = sqlite3.connect(copy)
    conn.execute("DELETE FROM alert_events")
    conn.execute("DELETE FROM alerts")
    conn.execute("UPDATE counters SET value = 0 WHERE name = 'alerts_upto'")
    conn.commit()
    conn.close()
    writer = StoreWriter(copy)
    try:
        settings = AlertSettings(rules=[*RULES, *({"id": b, "enabled": False} for b in _BUILTIN_IDS)])
        writer.run_alert_job(build_evaluator(settings, "demo").step).result()
    finally:
        writer.close()
    return _per_rule(copy)


_BUILTIN_IDS = [r.id for r in BUILTIN_RULES]


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
def test_sequence_distinct_and_group_by_alerts_survive_sigkill_restart_and_duplicates(
    make_simulator, tmp_path
):
    sim = make_simulator(backlog=60_000, heartbeat=0.2)
    sim.faults(duplicate_every=5)
    rules = [*RULES, *({"id": b, "enabled": False} for b in _BUILTIN_IDS)]
    (tmp_path / "settings.json").write_text(json.dumps({"schema_version": 1, "alerts": {"rules": rules}}))
    db, second = kill_then_catch_up(sim, tmp_path, 60_000, timeout=120)
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err

    got, shared = _per_rule(db)
    expected, _ = _uninterrupted(db, tmp_path)
    assert shared == 0  # no event behind two alerts of one rule
    assert all(expected[r] > 0 for r in OURS), expected  # each rule had something to find in the backlog
    assert got == expected
