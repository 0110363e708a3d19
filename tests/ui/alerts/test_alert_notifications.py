"""Alert rules → desktop notifications in the real app: a real simulator acts the incidents out, the real store
and rules evaluate them, and the real notification daemon (dunst) receives the Notify calls, watched on the bus.

Urgency follows the rule's severity (critical only for critical rules), a critical notification stays until it is
dismissed (expire_timeout 0) while the others leave expiry to the desktop (-1), a second burst within a rule's coalescing
time folds into the open alert without a second notification, and the old per-type notifications stay silent.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess

import pytest

from helpers.alert_events import EVERY_CONNECTION_CHANGE
from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    dunst_displayed,
    profile_for,
    run_async,
    running_app,
    until,
)
from helpers.notify_watch import NotifyWatch
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))  # never "off hours"
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_rules_notify_with_the_rules_severity_and_bursts_coalesce(qloop, ui_paths, make_simulator, dunst):
    sim = make_simulator(seed=4, backlog=0, rate=4.0, heartbeat=0.2)
    # org-deleted made an info rule here, to see the low urgency; the clock never makes "off hours"
    # (routine traffic adding members to the group just made admin would raise "member added to an admin group"
    # at a time of its own, routine traffic taking that role away again within the hour raises "temporary
    # elevation" when it happens to, and at 4 events a second (about 50 sign-ups a minute) routine sign-ups cross
    # the sign-up burst's 60 a minute at times, and routine traffic deleting that group raises "admin group
    # deleted": those four rules are off here; tests/alerts cover them)
    alerts = AlertSettings(
        working_hours=AROUND_THE_CLOCK,
        rules=[
            {"id": "org-deleted", "severity": "info"},
            {"id": "admin-group-member", "enabled": False},
            {"id": "admin-group-deleted", "enabled": False},
            {"id": "temporary-elevation", "enabled": False},
            {"id": "signup-burst", "enabled": False},
            *EVERY_CONNECTION_CHANGE,
        ],
    )
    save_settings(ui_paths, Settings(alerts=alerts))

    async def scenario() -> None:
        with NotifyWatch() as watch:
            async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
                session = await app.add_tenant(profile_for(sim, "acme"))
                assert session.is_signed_in and session.link.rules.runner is not None
                await until(lambda: session.status.state.value == "live", 30, "live")

                await asyncio.to_thread(sim.scenario, "admin_grant", to="group")
                await until(lambda: watch.of("Admin role assigned"), 20, "the admin-role notification")
                await asyncio.to_thread(sim.scenario, "org_connection", action="added")
                await until(lambda: watch.of("Organization connection changed"), 20, "org-connection")
                await asyncio.to_thread(sim.scenario, "org_deleted")
                await until(lambda: watch.of("Organization deleted"), 20, "org-deleted")

                await asyncio.to_thread(sim.scenario, "mass_deletion", n=25, over_s=1)
                await until(lambda: watch.of("Mass deletion"), 20, "mass deletion")
                await asyncio.to_thread(sim.scenario, "mass_deletion", n=25, over_s=1)
                book = app.alerts.book
                await until(
                    lambda: any(
                        e.alert.rule_id == "mass-deletion" and e.alert.event_count >= 50
                        for e in book.entries()
                    ),
                    20,
                    "the second burst folded into the alert",
                )
                await asyncio.sleep(1.0)  # a second notification would be on the bus by now
                assert app.alerts.unread == 5, [
                    e.alert.rule_name for e in book.entries()
                ]  # + the per-actor rule
                assert "5" in app.alerts.action.iconText()

        ours = [n for n in watch.seen if n.app == "Tenant Events"]
        by_title = {
            n.summary.split(" · ")[0]: n.urgency for n in ours
        }  # a grouped rule names its group after ·
        assert by_title == {
            "Admin role assigned": "critical",
            "Organization connection changed": "normal",
            "Organization deleted": "low",
            "Mass deletion": "critical",
            "Mass deletion by one actor": "critical",
        }, ours
        by_expiry = {n.summary.split(" · ")[0]: n.expire_timeout for n in ours}
        assert by_expiry == {
            "Admin role assigned": 0,  # critical: stays until dismissed
            "Organization connection changed": -1,  # the desktop's default
            "Organization deleted": -1,
            "Mass deletion": 0,
            "Mass deletion by one actor": 0,
        }, ours
        mass = [n for n in ours if n.summary == "Mass deletion"]
        assert len(mass) == 1  # the second burst went on within the first one's window: coalesced
        assert [n.summary for n in ours if n.summary.startswith("Mass deletion by")] == [
            "Mass deletion by one actor · client Backoffice Script"
        ]
        assert watch.of("Organization connection changed · organization ")
        body = mass[0].body
        # as a person says it, with the app's tenant name (the window can reach back to a routine deletion)
        assert re.fullmatch(r"2\d users deleted in (\d+ s|under a second)\nacme", body), body
        # routine traffic (4 events a second, deletions and role changes among them) raised nothing else
        assert len(ours) == 5

    run_async(qloop, scenario(), timeout=150)
    for v in _visits:
        v.cancel()


def _closed(after_id: int = 0) -> list[tuple[int, str]]:
    """(id, summary) of the notifications dunst has closed (its history) with an id above `after_id`: the history
    outlives a test, and ids only grow."""
    out = subprocess.run(["dunstctl", "history"], capture_output=True, text=True, timeout=10).stdout
    entries = json.loads(out or '{"data": [[]]}')["data"][0]
    closed = [(int(n["id"]["data"]), str(n["summary"]["data"])) for n in entries]
    return [(i, summary) for i, summary in closed if i > after_id]


def test_an_alert_that_fires_again_takes_the_place_of_its_notification(
    qloop, ui_paths, make_simulator, dunst
):
    """A critical notification stays until dismissed: a second grant folded into the same alert must not leave
    the first one on screen beside "Admin role assigned × 2"."""
    sim = make_simulator(seed=4, backlog=0, rate=1.0, heartbeat=0.2)
    alerts = AlertSettings(
        working_hours=AROUND_THE_CLOCK,
        rules=[
            {"id": "admin-group-member", "enabled": False},
            {"id": "temporary-elevation", "enabled": False},
            *EVERY_CONNECTION_CHANGE,
        ],
    )
    save_settings(ui_paths, Settings(alerts=alerts))

    async def admin_closed(after_id: int) -> list[str]:
        closed = await asyncio.to_thread(_closed, after_id)
        return [summary for _, summary in closed if summary.startswith("Admin role assigned")]

    async def scenario() -> None:
        with NotifyWatch() as watch:
            async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
                session = await app.add_tenant(profile_for(sim, "acme"))
                await until(lambda: session.status.state.value == "live", 30, "live")
                await asyncio.to_thread(subprocess.run, ["dunstctl", "close-all"], check=True)
                await until(
                    lambda: dunst_displayed() == 0, 10, "dunst cleared (earlier tests' critical ones)"
                )
                before = max((i for i, _ in await asyncio.to_thread(_closed)), default=0)
                await asyncio.to_thread(sim.scenario, "admin_grant", to="group")
                await until(lambda: watch.of("Admin role assigned"), 20, "the first notification")
                assert not await admin_closed(before)  # critical: it stays
                await asyncio.to_thread(sim.scenario, "admin_grant", to="group")
                await until(
                    lambda: watch.of("Admin role assigned × 2"), 20, "the second firing's notification"
                )
                closed: list[str] = []
                deadline = asyncio.get_running_loop().time() + 10
                while "Admin role assigned" not in closed:
                    assert asyncio.get_running_loop().time() < deadline, closed
                    await asyncio.sleep(0.1)
                    closed = await admin_closed(before)
                assert closed == ["Admin role assigned"]  # and the newer one stays until dismissed

    run_async(qloop, scenario(), timeout=120)
    for v in _visits:
        v.cancel()
