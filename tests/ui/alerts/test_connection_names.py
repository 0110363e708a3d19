"""Connections by name wherever a person reads an alert about one: a real simulator's tenant signs users up
through its four connections (each sign-up says which, in `data.context.connection`), then an organization gets
a connection, an event that carries the connection's id alone. The notification on the bus, the inbox's event
line and the table's Summary say "acme-saml (samlp)", not `con_…`. Real app, real store and directory, real
notification daemon."""

from __future__ import annotations

import asyncio
import re

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from helpers.notify_watch import NotifyWatch
from helpers.shots import shot
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings
from tenant_events.simulator.world import CONNECTIONS
from tenant_events.ui.window.table.event_table_model import Col

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
LABELS = {name if name == strategy else f"{name} ({strategy})" for name, strategy in CONNECTIONS}
_visits: list[asyncio.Future[str]] = []


def settled(text: str) -> str:
    """The sentence without an organization's " (123)": the live traffic renames organizations by that suffix
    alone, so the name the alert was raised with and the name the inbox or table shows a moment later differ."""
    return re.sub(r" \(\d{3}\)$", "", text or "")


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_a_connection_added_to_an_organization_is_named_in_the_notification_inbox_and_table(
    qloop, ui_paths, make_simulator, dunst
):
    # no live traffic: a routine connection change of its own could be the alert read below (seen on a loaded machine)
    sim = make_simulator(seed=12, backlog=800, rate=0.0, heartbeat=0.2)
    # every connection change is "Organization connection changed" here, a new organization's set-up too (this is
    # about how a connection is named, not about onboarding)
    every_change = [
        {"id": "org-connection", "state": []},
        {"id": "org-connection-onboarding", "enabled": False},
    ]
    save_settings(
        ui_paths, Settings(alerts=AlertSettings(working_hours=AROUND_THE_CLOCK, rules=every_change))
    )

    async def scenario() -> None:
        with NotifyWatch() as watch:
            async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
                w, alerts = app.window, app.alerts
                session = await app.add_tenant(profile_for(sim, "acme"))
                await until(lambda: session.status.state.value == "live", 30, "live")
                assert session.ui_reader is not None
                directory = session.ui_reader.directory()

                # the backlog's sign-ups have taught the directory every connection's name and strategy
                def known() -> set[str]:
                    return {e.label for n, _s in CONNECTIONS for e in directory.find("connection", n)}

                await until(lambda: known() == LABELS, 30, "the connections' names")
                book = alerts.book
                seen = {e.alert.id: e.alert.event_count for e in book.entries()}

                def changed():
                    return next(
                        (
                            e
                            for e in book.entries()
                            if e.alert.rule_id == "org-connection"
                            and e.alert.event_count > seen.get(e.alert.id, 0)
                        ),
                        None,
                    )

                await asyncio.to_thread(sim.scenario, "org_connection", action="added")
                entry = await until(changed, 20, "the org-connection alert")
                # the alert's detail: "Connection acme-saml (samlp) added to organization Acme Europe"
                said = entry.alert.detail
                assert said.startswith("Connection ") and " added to organization " in said, said
                label, org = said.removeprefix("Connection ").split(" added to organization ")
                assert label in LABELS, said
                sentence = f"connection {label} added to organization {org}"
                # its notification on the bus says it (alone, or as the latest of the alert's events)
                await until(
                    lambda: [n for n in watch.of("Organization connection changed") if said in n.body],
                    20,
                    "its notification",
                )
                assert not any("con_" in n.body for n in watch.of("Organization connection changed")), (
                    watch.seen
                )

                inbox = alerts.open_inbox("acme", entry.alert.id)
                await until(lambda: inbox.event_list.count() >= 1, 10, "its events")
                lines = [inbox.event_list.item(i).text() for i in range(inbox.event_list.count())]
                assert any(settled(line).endswith(settled(sentence)) for line in lines), (sentence, lines)
                assert not any("con_" in line for line in lines), lines
                inbox.resize(1200, 500)
                shot(inbox, "connection-names-inbox")

                # the alert's events in the table: the Summary says the same
                inbox.table_button.click()

                def summaries() -> set[str]:
                    return {w.model.index(r, Col.SUMMARY).data() for r in range(w.model.rowCount())}

                def said_in_table() -> bool:
                    return settled(sentence) in {settled(text) for text in summaries()}

                await until(
                    lambda: w.filter_bar.alert_chip.isVisible() and said_in_table(),
                    10,
                    "the table's sentence",
                )
                inbox.close()

                # every organization connection change stored: each connection by its name
                query = "type:organization.connection.*"
                w.filter_bar.alert_chip.remove()
                w.filter_bar.search.setText(query)
                await until(
                    lambda: (
                        w.model.event_filter.query == query
                        and not w.first_page.busy
                        and w.model.rowCount() > 3
                    ),
                    10,
                    "the connection changes",
                )
                await until(lambda: not any("con_" in text for text in summaries()), 10, "every row named")
                assert said_in_table()
                w.resize(1600, 900)
                shot(w, "connection-names-table")

    run_async(qloop, scenario(), timeout=150)
    for v in _visits:
        v.cancel()
