"""`tenant-events stream` evaluating the alert rules as it stores, `alerts` and `rules`, run as a user runs them:
subprocesses against the real simulator. Exactly once: SIGKILL in the middle of a catch-up, a restart and
re-sent events never raise an alert twice nor leave an event unevaluated."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys

import orjson
import pytest

from helpers.fixtures_engine import demo_stream
from helpers.stream_kill import counter as _counter
from helpers.stream_kill import evaluated_all, kill_then_catch_up
from helpers.stream_kill import stored as _stored
from helpers.stream_kill import wait as _wait
from tenant_events.settings import SCHEMA_VERSION
from tenant_events.store import AlertInbox

NO_OFF_HOURS = {"schema_version": 1, "alerts": {"rules": [{"id": "off-hours", "enabled": False}]}}
LINE_KEYS = {
    "alert_id",
    "rule",
    "rule_name",
    "severity",
    "tenant",
    "count",
    "occurrences",
    "catch_up",
    "first_event_id",
    "first_event_time",
    "last_event_id",
    "last_event_time",
    "types",
    "detail",
    "raised_at",
    "read",
    "version",
    "state",
    "fired_at",
    "firing",
}


def _settings(tmp_path, data):
    (tmp_path / "settings.json").write_text(json.dumps(data))


def test_stream_writes_alert_lines_and_alerts_lists_them(make_simulator, tmp_path):
    sim = make_simulator(heartbeat=0.2, test_purpose_every=0)  # (rules skip test events)
    _settings(tmp_path, NO_OFF_HOURS)
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    proc = demo_stream(sim, tmp_path, "--alerts-jsonl", "-", env=env)
    db = tmp_path / "tenants" / "demo.sqlite3"
    _wait(
        lambda: db.exists() and _counter(db, "alerts_upto") >= 0 and sim.stats()["connections"] == 1,
        "connected",
        proc,
    )
    sim.emit(1, ["organization.deleted"])
    sim.emit(30, ["user.deleted"])
    _wait(lambda: _stored(db) >= 31, "31 stored", proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert [line["rule"] for line in lines] == ["org-deleted", "mass-deletion"]
    assert all(set(line) == LINE_KEYS for line in lines)
    mass = lines[1]
    # the tenant is named as the user named it (--name demo), not by the service's name in its events
    assert (mass["severity"], mass["tenant"], mass["catch_up"]) == ("critical", "demo", False)
    assert (
        mass["count"] >= 20
        and mass["first_event_id"].startswith("evt_")
        and mass["last_event_time"].endswith("Z")
    )
    assert "alert (critical): Mass deletion:" in err and "alert (warning): Organization deleted:" in err

    listed = subprocess.run(
        [sys.executable, "-m", "tenant_events", "alerts", "--data-dir", str(tmp_path), "--jsonl", "-"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    stored = [orjson.loads(line) for line in listed.stdout.splitlines()]
    assert [s["alert_id"] for s in stored] == [lines[1]["alert_id"], lines[0]["alert_id"]]  # newest first
    assert stored[0]["count"] == 30 and stored[0]["types"] == {"user.deleted": 30}  # the final count
    assert "2 alerts from demo; 2 unread" in listed.stderr
    assert [s["tenant"] for s in stored] == ["demo", "demo"]  # one name for the tenant, in every line

    # the query term alert:ID (the window's alert chip) exports exactly the events behind that alert
    behind = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "export",
            "--data-dir",
            str(tmp_path),
            "--query",
            f"alert:{stored[0]['alert_id']}",
            "--jsonl",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert behind.returncode == 0, behind.stderr
    exported = [orjson.loads(line)["event"] for line in behind.stdout.splitlines()]
    assert len(exported) == 30 and {e["type"] for e in exported} == {"user.deleted"}
    assert stored[0]["last_event_id"] in {e["id"] for e in exported}
    other = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "export",
            "--data-dir",
            str(tmp_path),
            "--query",
            f"alert:{stored[1]['alert_id']}",
            "--jsonl",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert [orjson.loads(line)["event"]["type"] for line in other.stdout.splitlines()] == [
        "organization.deleted"
    ]

    text = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "alerts",
            "--data-dir",
            str(tmp_path),
            "--since",
            "1h",
            "--mark-read",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert "critical" in first and "Mass deletion: 30 users deleted in" in first
    tails = [line.rsplit("  ", 1)[1] for line in text.stdout.splitlines()]
    with AlertInbox(db) as inbox:
        numbers = [a.id for a in inbox.alerts()]
    assert len(tails) == 2 and tails == [f"(demo, alert {n}, unread)" for n in numbers]  # triage takes it
    assert "2 marked read; 0 unread" in text.stderr
    with AlertInbox(db) as inbox:
        assert inbox.unread_count() == 0
    future = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "alerts",
            "--data-dir",
            str(tmp_path),
            "--since",
            "2099-01-01T00:00:00Z",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert future.stdout == "" and "0 alerts from demo" in future.stderr


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
def test_exactly_once_across_sigkill_restart_and_resent_events(make_simulator, tmp_path):
    sim = make_simulator(backlog=100_000, heartbeat=0.2)
    sim.faults(duplicate_every=7)
    db, second = kill_then_catch_up(sim, tmp_path, 100_000, timeout=90)
    # a scenario's deletion is never a test event (an emitted one may be, and the rules pass over those); it sends
    # the organization's creation and members first
    live = sim.scenario("org_deleted")["last_seq"]
    _wait(lambda: evaluated_all(db, live), "the live event", second)
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 0, err

    conn = sqlite3.connect(db)
    try:
        newest = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()[0]
        assert _counter(db, "alerts_upto") == newest  # every stored event evaluated
        # every organization deletion (not a test event) is counted in exactly one org-deleted alert (an alert
        # links at most MAX_ALERT_EVENTS of its events; the summary of the catch-up has more)
        deletions = conn.execute(
            "SELECT count(*) FROM events WHERE type = 'organization.deleted' AND purpose IS NOT 'test'"
        ).fetchone()[0]
        counted = conn.execute(
            "SELECT sum(event_count) FROM alerts WHERE rule_id = 'org-deleted'"
        ).fetchone()[0]
        assert deletions > 50 and counted == deletions
        # no event is behind two alerts of one rule, whatever the rule
        shared = conn.execute(
            "SELECT a.rule_id, e.seq, group_concat(a.id) FROM alert_events e JOIN alerts a"
            " ON a.id = e.alert_id GROUP BY 1, 2 HAVING count(*) > 1"
        ).fetchall()
        assert shared == [], shared[:20]
        # the backlog became one summary per rule and group (a grouped rule's alert names its group; two groups
        # may share a name: organizations named alike), across the kill too; the live deletion is in a live alert
        summaries = conn.execute(
            "SELECT rule_id, group_key, count(*) FROM alerts WHERE catch_up GROUP BY 1, 2"
        ).fetchall()
        assert summaries and all(n == 1 for *_, n in summaries), [s for s in summaries if s[2] > 1]
        assert any(key for _, key, _ in summaries)  # grouped rules among them, one alert per group
        last = conn.execute("SELECT max(seq) FROM events WHERE type = 'organization.deleted'").fetchone()[0]
        live = conn.execute(
            "SELECT a.rule_id, a.catch_up FROM alert_events e JOIN alerts a ON a.id = e.alert_id"
            " WHERE e.seq = ?",
            (last,),
        ).fetchall()
        assert ("org-deleted", 0) in live
    finally:
        conn.close()


def test_a_bad_rule_stops_the_stream_naming_the_rule_and_field(tmp_path):
    bad = {
        "schema_version": SCHEMA_VERSION,
        "alerts": {"rules": [{"id": "signup-burst", "threshold": {"count": 60, "window_seconds": -1}}]},
    }
    _settings(tmp_path, bad)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "stream",
            "--base-url",
            "http://127.0.0.1:9/api/v2",
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "TENANT_EVENTS_ACCESS_TOKEN": "x"},
    )
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == [
        "tenant-events: alert rule 'signup-burst': threshold.window_seconds: Input should be greater than 0 — fix "
        "alerts.rules in the settings file; `tenant-events rules` lists every problem"
    ]
    assert not (tmp_path / "tenants").exists()  # nothing was started
    check = subprocess.run(
        [sys.executable, "-m", "tenant_events", "rules", "--check", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert check.returncode == 3 and "alert rule 'signup-burst': threshold.window_seconds" in check.stderr
    assert json.loads((tmp_path / "settings.json").read_text()) == bad  # the settings file was left alone


def test_rules_try_says_how_often_a_rule_would_have_fired(make_simulator, tmp_path):
    sim = make_simulator(heartbeat=0.2)
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    proc = demo_stream(sim, tmp_path, "--no-alerts", env=env)
    db = tmp_path / "tenants" / "demo.sqlite3"
    _wait(lambda: db.exists() and sim.stats()["connections"] == 1, "connected", proc)
    sim.emit(25, ["user.deleted"])
    _wait(lambda: _stored(db) >= 25, "stored", proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    with AlertInbox(db) as inbox:
        assert inbox.alerts() == []  # --no-alerts: nothing evaluated
    tried = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "rules",
            "--data-dir",
            str(tmp_path),
            "--try",
            "mass-deletion",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert tried.returncode == 0, tried.stderr
    assert tried.stdout.strip() == (
        "Mass deletion (mass-deletion) would have fired once in the last 7 days (1 notification, 25 events)"
    )
    unknown = subprocess.run(
        [sys.executable, "-m", "tenant_events", "rules", "--data-dir", str(tmp_path), "--try", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert unknown.returncode == 3 and "--try: no alert rule 'nope'" in unknown.stderr


def test_stream_says_an_info_alerts_later_firings_no_more_and_a_warnings_each_time(make_simulator, tmp_path):
    """As the desktop does: an info alert is said when raised, not at each event folded into it (a busy night's
    "changes outside working hours" would be a line an event); a warning's new versions are said again."""
    sim = make_simulator(heartbeat=0.2, rate=0, test_purpose_every=0)
    _settings(
        tmp_path, {"schema_version": 1, "alerts": {"working_hours": {"days": []}}}
    )  # never working hours
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    proc = demo_stream(sim, tmp_path, env=env)
    db = tmp_path / "tenants" / "demo.sqlite3"
    _wait(lambda: db.exists() and sim.stats()["connections"] == 1, "connected", proc)
    for n in range(1, 4):  # three evaluation steps, each a firing of both rules
        sim.emit(1, ["organization.deleted"])
        _wait(lambda n=n: evaluated_all(db, n), f"{n} evaluated", proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    with AlertInbox(db) as inbox:
        versions = {a.rule_id: a.occurrences for a in inbox.alerts()}
    assert versions == {"off-hours": 3, "org-deleted": 3}, versions  # both fired three times
    assert err.count("alert (info): Changes outside working hours") == 1, err
    assert err.count("alert (warning): Organization deleted") == 3, err
