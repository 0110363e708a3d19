"""Two viewers of one hub tenant, each with its own database and inbox: an alert acknowledged with a note in one
inbox shows in the other within 1 s as "team · acknowledged by viewer HH:MM — note" (the hub user), and the
second viewer's count drops. Real nats-server with the documented permissions."""

from __future__ import annotations

import time

import pytest

from helpers.deliveries import alert_write, store_alerts
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from tenant_events.hub.connection import HubAuth, HubOptions, connect
from tenant_events.hub.provision import StreamPlan, provision
from tenant_events.hub.subjects import HubNames
from tenant_events.tenant.team_triage import start_mirror
from tenant_events.ui.alerts.alert_book import AlertBook
from tenant_events.ui.alerts.inbox_window import InboxWindow

pytestmark = [pytest.mark.gui, pytest.mark.hub, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _options(hub, user):
    return HubOptions(tuple(hub.urls.split(",")), HubAuth("password", user, getattr(hub.credentials, user)))


def _inbox(qtbot, folder, mirror, *, open_it: bool):
    book = AlertBook(lambda profile: folder / f"{profile}.sqlite3")
    book.add("acme")
    w = InboxWindow(book, lambda profile, seqs: [])
    w.triage.team = lambda profile: mirror
    qtbot.addWidget(w)
    w.show()
    if open_it:  # selecting an alert opens it, and an opened alert is read: it no longer counts
        w.table.selectRow(0)
    return book, w


def test_an_acknowledgement_in_one_viewer_shows_in_another_within_a_second(
    qloop, qtbot, nats_single, tmp_path
):
    hub = nats_single
    (tmp_path / "ana").mkdir()
    (tmp_path / "bo").mkdir()
    store_alerts(tmp_path / "ana" / "acme.sqlite3", [alert_write()])
    store_alerts(tmp_path / "bo" / "acme.sqlite3", [alert_write()])

    async def scenario() -> None:
        collector = await connect(_options(hub, "collector"), reconnect=False)
        await provision(collector.jetstream(), HubNames("acme"), StreamPlan())
        ana = await start_mirror(tmp_path / "ana" / "acme.sqlite3", _options(hub, "viewer"), "acme")
        bo = await start_mirror(tmp_path / "bo" / "acme.sqlite3", _options(hub, "viewer2"), "acme")
        ana_book, ana_w = _inbox(qtbot, tmp_path / "ana", ana, open_it=True)
        # the second viewer has not opened the alert: it counts until someone triages it
        bo_book, bo_w = _inbox(qtbot, tmp_path / "bo", bo, open_it=False)
        bo.on_applied.append(bo_w._triaged)  # what the app's refresh does
        assert ana_w.triage.state.text() == "team · Nobody has triaged this alert yet."
        assert bo_book.unread() == 1 and bo_w.summary.text() == "1 unread · 1 alert"
        ana_w.triage.note.setText("looking into it")
        started = time.monotonic()
        ana_w.triage.buttons["acknowledged"].click()
        await until(lambda: bo.applied == 1, 5, "the acknowledgement in the second viewer")
        assert time.monotonic() - started < 1.0
        # the count drops by the teammate's acknowledgement (it reads the alert), not opened here
        assert bo_book.unread() == 0 and bo_w.current() is None
        bo_w.table.selectRow(0)
        bo_w.triage.show_entry(bo_w.current())
        text = bo_w.triage.state.text()
        assert text.startswith("team · acknowledged by viewer ") and text.endswith("— looking into it")
        bo_w.resize(900, 620)
        save_screenshot(bo_w, "team-acknowledged-second-viewer")
        listed = [bo_w.event_list.item(i).text() for i in range(bo_w.event_list.count())]
        assert listed == ["25 events (Show in the table)"]  # none stored here: not "… 25 more" after nothing
        await ana.stop()
        await bo.stop()
        await collector.close()
        ana_book.close()
        bo_book.close()

    run_async(qloop, scenario(), timeout=60)
