"""Exactly once for the correlation rules: a sequence, a distinct count and a group-by threshold evaluated by
`tenant-events stream` over a simulator backlog, with duplicate deliveries, while the process that stores (the
writer), the rules' own process (the evaluator) or both are SIGKILLed in the middle of evaluating it — and the
alerts come out exactly as one uninterrupted evaluation of the same stored events gives them (their state is
rebuilt from the store after each kill)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from helpers.fixtures_engine import OLD, demo_stream
from helpers.slack import bound
from helpers.stream_kill import counter, kill_then_catch_up, stored, wait
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
BACKLOG = 30_000  # for the kills of the rules' process: it evaluates well behind the store (a lower priority)


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


def _uninterrupted(db, tmp_path, upto=None):
    """The same stored events (up to seq `upto`: those the stream had evaluated) evaluated once, from scratch, by
    the same rules: the oracle."""
    copy = tmp_path / "oracle.sqlite3"
    source, conn = sqlite3.connect(db), sqlite3.connect(copy)
    source.backup(conn)  # with what a killed stream left in the write-ahead log
    source.close()
    if upto is not None:
        conn.execute("DELETE FROM events WHERE seq > ?", (upto,))
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


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the rules' process of a `stream`)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


@pytest.mark.expect_warning_logs  # the in-process simulator logs writes to the killed client
@pytest.mark.parametrize("kill", ["evaluator", "both"])
def test_the_alerts_survive_a_sigkill_of_the_evaluator_or_of_both_processes(make_simulator, tmp_path, kill):
    """The evaluator: the stream starts it again and it resumes from its stored watermark. Both: a second
    stream goes on from what each had committed. The evaluator ends with the stream that started it."""
    sim = make_simulator(backlog=BACKLOG, heartbeat=0.2)
    sim.faults(duplicate_every=5)
    rules = [*RULES, *({"id": b, "enabled": False} for b in _BUILTIN_IDS)]
    (tmp_path / "settings.json").write_text(json.dumps({"schema_version": 1, "alerts": {"rules": rules}}))
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    db = tmp_path / "tenants" / "demo.sqlite3"
    stream = demo_stream(sim, tmp_path, "--from-timestamp", OLD, env=env)
    wait(lambda: counter(db, "alerts_upto") > 0, "the first alerts committed", stream, timeout=60)
    [evaluator] = _children(stream.pid)
    if kill == "both":
        stream.send_signal(signal.SIGKILL)
    os.kill(evaluator, signal.SIGKILL)
    assert counter(db, "alerts_upto") < BACKLOG, "the kill came after the whole backlog was evaluated"
    if kill == "both":
        stream.wait(timeout=10)
        stream = demo_stream(sim, tmp_path, "--from-timestamp", OLD, env=env)
    else:
        wait(lambda: [p for p in _children(stream.pid) if p != evaluator], "a new evaluator", stream, 60)
    wait(
        lambda: counter(db, "alerts_upto") >= BACKLOG and stored(db) >= BACKLOG,
        "caught up",
        stream,
        timeout=120,
    )
    [last] = _children(stream.pid)
    stream.send_signal(signal.SIGKILL)  # the writer alone: its evaluator goes with it
    stream.wait(timeout=10)
    deadline = time.monotonic() + bound(10)
    while not _gone(last) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(last), "the evaluator outlived the stream that started it"

    got, shared = _per_rule(db)
    expected, _ = _uninterrupted(db, tmp_path, upto=counter(db, "alerts_upto"))
    assert shared == 0  # no event behind two alerts of one rule
    assert all(expected[r] > 0 for r in OURS), expected
    assert got == expected
