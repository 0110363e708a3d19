"""One person's triage in the tenant database: acknowledge, snooze until, resolve with a note; the badge counts
only what needs someone, and a snoozed alert comes back by itself when its snooze ends. Also from the CLI."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

from helpers.deliveries import alert_write, store_alerts
from tenant_events.store import AlertInbox
from tenant_events.store.alert_triage import AlertTriage


def test_acknowledged_resolved_and_snoozed_alerts_leave_the_count_and_a_snooze_comes_back(tmp_path):
    db = tmp_path / "acme.sqlite3"
    a, b, c, d = store_alerts(
        db, [alert_write("r1"), alert_write("r2"), alert_write("r3"), alert_write("r4")]
    )
    with AlertInbox(db) as inbox, AlertTriage(db) as triage:
        assert inbox.unread_count() == 4
        triage.set(a, "acknowledged", "ana", "looking into it")
        triage.set(b, "resolved", "ana", "expected: quarterly clean-up")
        now = time.time()
        triage.set(c, "snoozed", "ana", until=now + 0.6)
        assert inbox.unread_count() == 1  # only d needs someone
        assert (
            triage.attention(now + 1.0) == 2
        )  # at the snooze's end, c is back without anyone doing anything
        time.sleep(0.7)
        assert inbox.unread_count() == 2
        assert inbox.get(a).read and inbox.get(b).read  # acknowledging reads it
        triage.set(a, "open", "bo", "not done yet")  # reopened: unread and counted again
        assert inbox.unread_count() == 3 and not inbox.get(a).read
        states = triage.states()
        assert (states[a].state, states[a].by, states[a].note) == ("open", "bo", "not done yet")
        assert [(t.state, t.by) for t in triage.history(a)] == [("acknowledged", "ana"), ("open", "bo")]
        with pytest.raises(ValueError, match="a snooze needs an end in the future"):
            triage.set(d, "snoozed", "ana", until=time.time() - 1)
        with pytest.raises(ValueError, match="no alert 999"):
            triage.set(999, "acknowledged", "ana")
        with pytest.raises(ValueError, match="at most 500"):
            triage.set(d, "resolved", "ana", "x" * 501)
        assert triage.history(d) == []  # nothing of the refused changes was written


def _cli(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", "triage", *args, "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_triage_from_the_command_line(tmp_path):
    db = tmp_path / "tenants" / "acme.sqlite3"
    db.parent.mkdir(parents=True)
    [alert_id] = store_alerts(db, [alert_write()])
    done = _cli(tmp_path, "ack", str(alert_id), "--note", "looking into it\x1b[31m")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"acme alert {alert_id}: acknowledged by ")
    assert done.stdout.rstrip().endswith("— looking into it\\x1b[31m")  # the escape shown, not obeyed
    snoozed = _cli(tmp_path, "snooze", str(alert_id), "--for", "2h")
    assert snoozed.returncode == 0 and " until " in snoozed.stdout
    bad = _cli(tmp_path, "snooze", str(alert_id), "--for", "soon")
    assert (
        bad.returncode == 3
        and bad.stderr.strip() == "tenant-events: --for: 'soon' is not a duration like 30m, 2h or 1d"
    )
    missing = _cli(tmp_path, "ack", "77")
    assert missing.returncode == 3 and "no alert 77 in acme" in missing.stderr
    missing = _cli(tmp_path, "show", "77")  # not an empty history
    assert (
        missing.returncode == 3 and missing.stderr.strip() == "tenant-events: alert 77: no alert 77 in acme"
    )
    [untouched] = store_alerts(db, [alert_write()])
    quiet = _cli(tmp_path, "show", str(untouched))
    assert quiet.returncode == 0 and quiet.stdout == f"acme alert {untouched}: nobody has triaged it yet\n"
    shown = _cli(tmp_path, "show", str(alert_id))
    assert [line.split(" by ")[0] for line in shown.stdout.splitlines()] == ["acknowledged", "snoozed"]


def test_a_resolved_alert_is_reopened_before_it_is_acknowledged_or_snoozed(tmp_path):
    """The lifecycle in one place: a resolved alert is over; acknowledging or snoozing it is refused with the
    way forward (reopen it), here and on the command line, and nothing is written — its state stays resolved and
    the destinations are told of its end once. Reopened, it can be acknowledged; a teammate's change from the hub
    is kept as it was made."""
    db = tmp_path / "tenants" / "acme.sqlite3"
    db.parent.mkdir(parents=True)
    a, b = store_alerts(db, [alert_write("r1"), alert_write("r2")])
    with AlertTriage(db) as triage:
        triage.set(a, "resolved", "ana", "expected")
        for state, until in (("acknowledged", None), ("snoozed", time.time() + 60)):
            with pytest.raises(ValueError) as refused_here:
                triage.set(a, state, "bo", until=until)  # type: ignore[arg-type]
            assert str(refused_here.value) == f"the alert is resolved: it cannot be {state}; reopen it first"
        assert [t.state for t in triage.history(a)] == ["resolved"]
        triage.set(a, "resolved", "bo")  # resolving it again changes nothing
    refused = _cli(tmp_path, "ack", str(a))
    assert refused.returncode == 3, refused.stderr
    assert refused.stderr.strip() == (
        f"tenant-events: alert {a}: the alert is resolved: it cannot be acknowledged; reopen it first"
    )
    assert _cli(tmp_path, "reopen", str(a)).returncode == 0
    assert _cli(tmp_path, "ack", str(a)).returncode == 0
    with AlertTriage(db) as triage:
        triage.set(b, "resolved", "ana")
        triage.set(b, "acknowledged", "carol", at=time.time(), mirrored=True)  # the team's, as made
        assert [t.state for t in triage.history(a)] == ["resolved", "resolved", "open", "acknowledged"]
        assert triage.states()[b].state == "acknowledged"
    conn = sqlite3.connect(db)
    try:
        resolves = conn.execute(
            "SELECT alert_id, nth FROM alert_outbox WHERE kind = 'resolved' ORDER BY alert_id, nth"
        ).fetchall()
    finally:
        conn.close()
    assert resolves == [(a, 1), (b, 1)]  # each told once: no second resolve from the refused or repeated ones


@pytest.mark.parametrize(
    "value",
    [
        b'{"state": "acknowledged", "at": 1e300}',
        b'{"state": "acknowledged", "at": -1.0}',
        b'{"state": "snoozed", "at": 1800000000.0, "until": 1e20}',
        b'{"state": "snoozed", "at": 1800000000.0, "until": NaN}',  # not JSON: as a hostile client sends it
    ],
)
def test_a_teammates_hub_entry_with_a_time_no_clock_can_show_is_left_out(value):
    """It crashed `triage show` and the triage bar of every viewer that stored it."""
    from tenant_events.hub.triage import parse_entry

    assert parse_entry("mass-deletion.evt_a.eve", value, 7) is None
    good = b'{"state": "acknowledged", "at": 1800000000.0}'
    assert parse_entry("mass-deletion.evt_a.eve", good, 8) is not None
