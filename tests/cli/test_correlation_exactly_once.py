"""Exactly once for the correlation rules: a sequence, a distinct count and a group-by threshold evaluated by
`tenant-events stream` over a simulator backlog, SIGKILLed in the middle of evaluating it, restarted, with
duplicate deliveries — and the alerts come out exactly as one uninterrupted evaluation of the same stored
events gives them (their state is rebuilt from the store after the kill)."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import time

import pytest

from helpers.fixtures_engine import OLD, cli
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts import BUILTIN_RULES
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.store import StoreWriter

RULES = [
    {"id": "join-and-leave", "name": "Joined and left", "severity": "info",
     "types": ["organization.member.added", "organization.member.deleted"],
     "group_by": ["object.organization.id", "object.user.user_id"],
     "sequence": {"steps": [{"types": ["organization.member.added"]}, {"types": ["organization.member.deleted"]}],
                  "within_seconds": 3600}},
    {"id": "many-users-one-client", "name": "Users deleted by one client", "severity": "info",
     "types": ["user.deleted"], "group_by": ["context.client.id"],
     "threshold": {"count": 3, "window_seconds": 600, "distinct": "object.user_id"}},
    {"id": "busy-group", "name": "Busy group", "severity": "info", "types": ["group.member.added"],
     "group_by": ["object.group.id"], "threshold": {"count": 3, "window_seconds": 900}},
]  # fmt: skip
OURS = [r["id"] for r in RULES]


def _per_rule(db):
    conn = sqlite3.connect(db)
    try:
        counts = dict(conn.execute("SELECT rule_id, sum(event_count) FROM alerts GROUP BY 1").fetchall())
        shared = conn.execute("SELECT count(*) FROM (SELECT a.rule_id, e.seq FROM alert_events e JOIN alerts a"
                              " ON a.id = e.alert_id GROUP BY 1, 2 HAVING count(*) > 1)").fetchone()[0]  # fmt: skip
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


def _counter(db, name):
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _stored(db):
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _wait(check, what, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"stream exited {proc.returncode} before {what}: {proc.stderr.read()}")
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
def test_sequence_distinct_and_group_by_alerts_survive_sigkill_restart_and_duplicates(
    make_simulator, tmp_path
):
    sim = make_simulator(backlog=60_000, heartbeat=0.2)
    sim.faults(duplicate_every=5)
    rules = [*RULES, *({"id": b, "enabled": False} for b in _BUILTIN_IDS)]
    (tmp_path / "settings.json").write_text(json.dumps({"schema_version": 1, "alerts": {"rules": rules}}))
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    args = ("stream", "--base-url", sim.base_url, "--name", "demo", "--data-dir", str(tmp_path),
            "--from-timestamp", OLD)  # fmt: skip
    db = tmp_path / "tenants" / "demo.sqlite3"
    first = cli(*args, env=env)
    _wait(lambda: _counter(db, "alerts_upto") > 0, "the first alerts committed", first, timeout=60)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    killed_at = _counter(db, "alerts_upto")
    assert killed_at < 60_000, "the kill came after the whole backlog was evaluated: nothing was tested"

    second = cli(*args, env=env)
    _wait(
        lambda: _counter(db, "alerts_upto") >= 60_000 and _stored(db) >= 60_000,
        "caught up",
        second,
        timeout=120,
    )
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err

    got, shared = _per_rule(db)
    expected, _ = _uninterrupted(db, tmp_path)
    assert shared == 0  # no event behind two alerts of one rule
    assert all(expected[r] > 0 for r in OURS), expected  # each rule had something to find in the backlog
    assert got == expected
