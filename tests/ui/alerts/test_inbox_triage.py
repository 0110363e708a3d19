"""The inbox's triage row: acknowledge with a note, snooze, resolve, reopen — the state and its history under the
alert, the unread count (the tray badge's) following; a note's control characters are shown escaped."""

from __future__ import annotations

import getpass

import pytest

from helpers.deliveries import alert_write, store_alerts
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from tenant_events.ui.alerts.alert_book import AlertBook
from tenant_events.ui.alerts.inbox_window import InboxWindow

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _inbox_on_the_first_alert(qtbot, tmp_path) -> tuple[AlertBook, InboxWindow]:
    """The inbox over tmp_path's acme database, shown, its first alert picked."""
    book = AlertBook(lambda profile: tmp_path / f"{profile}.sqlite3")
    book.add("acme")
    w = InboxWindow(book, lambda profile, seqs: [])
    qtbot.addWidget(w)
    w.show()
    w.table.selectRow(0)
    return book, w


def test_triage_in_the_inbox(qtbot, tmp_path):
    store_alerts(tmp_path / "acme.sqlite3", [alert_write("r1"), alert_write("r2")])
    book = AlertBook(lambda profile: tmp_path / f"{profile}.sqlite3")
    book.add("acme")
    read_changes = []
    w = InboxWindow(book, lambda profile, seqs: [])
    w.read_changed.connect(lambda: read_changes.append(1))
    qtbot.addWidget(w)
    w.show()
    assert book.unread() == 2
    w.table.selectRow(0)
    bar = w.triage
    assert bar.state.text() == "Nobody has triaged this alert yet."
    # firing: every way on is offered, and no Reopen of what is open
    assert {s for s, b in bar.buttons.items() if b.isEnabled()} == {"acknowledged", "snoozed", "resolved"}
    bar.note.setText("looking into it\x1b[2J")
    bar.buttons["acknowledged"].click()
    me = getpass.getuser()
    assert bar.state.text().startswith(f"acknowledged by {me} ")
    assert bar.state.text().endswith("— looking into it\\x1b[2J")
    assert book.unread() == 1 and read_changes and w.summary.text().startswith("1 unread")
    assert not bar.buttons["acknowledged"].isEnabled()  # acknowledged already
    w.resize(900, 620)
    assert w.grab().save("/tmp/inbox-acknowledged.png")
    bar.buttons["snoozed"].click()
    assert " until " in bar.state.text().splitlines()[0] and "Earlier: acknowledged" in bar.state.text()
    bar.buttons["open"].click()
    assert book.unread() == 2  # reopened: it needs someone again
    bar.note.setText("expected: quarterly clean-up")
    bar.buttons["resolved"].click()
    assert bar.state.text().splitlines()[0].endswith("— expected: quarterly clean-up")
    assert book.unread() == 1
    # resolved: it is over; only reopening is offered
    assert {s for s, b in bar.buttons.items() if b.isEnabled()} == {"open"}
    bar.buttons["open"].click()
    assert {s for s, b in bar.buttons.items() if b.isEnabled()} == {"acknowledged", "snoozed", "resolved"}
    book.close()


def test_an_alert_never_delivered_is_marked_in_the_inbox(qtbot, tmp_path):
    from helpers.deliveries import free_port, run_worker, target
    from tenant_events.store.outbox import read_status

    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    dead = f"json://127.0.0.1:{free_port()}/hook"
    run_worker(
        db,
        {"pager": target("pager", dead)},
        lambda: bool(read_status(db)) and read_status(db)[0].undelivered == 1,
        horizon_s=0.3,
    )
    book, w = _inbox_on_the_first_alert(qtbot, tmp_path)
    assert w.triage.state.text().startswith("Undelivered to pager (given up after 24 h) · Nobody has triaged")
    book.close()


def test_a_triage_time_no_clock_can_show_does_not_stop_the_triage_row(qtbot, tmp_path):
    """An older version stored a teammate's entry with a time of 1e300 from the hub: the row shows the alert and
    says the time is out of range (it raised OverflowError for every viewer)."""
    import sqlite3

    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write("r1")])
    book, w = _inbox_on_the_first_alert(qtbot, tmp_path)
    w.triage.buttons["acknowledged"].click()  # (the triage tables exist from here on)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alert_triage SET state = 'snoozed', by = 'eve', at = 1e300, until = -1e300")
        conn.execute(
            "INSERT INTO alert_triage_log (alert_id, at, state, by, until, note) VALUES (1, 1e300, 'snoozed', 'eve', -1e300, '')"
        )
    conn.close()
    w.table.selectRow(0)
    w.triage.show_entry(w.triage.entry)
    assert "snoozed by eve (a time out of range) until (a time out of range)" in w.triage.state.text()
    book.close()
