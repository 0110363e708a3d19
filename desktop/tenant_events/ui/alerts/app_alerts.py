"""Alerts in the app: notifications from each tenant's rules, the inbox, the unread count and do-not-disturb on
the window (and, through `entries_changed` / `mute_changed`, on the tray: ui/app/tray_wiring.py).

    TenantLink's rules (tenant/alert_rules.py) ─▶ TenantSession.alerts_raised ─▶ AlertNotes (notifications)
    ─▶ alerts_changed ─▶ refresh(): unread count on the window's Alerts button, the tray's badge and list, the inbox
    notification / tray entry clicked ─▶ open_inbox(tenant, alert id)

The rules run in each tenant's link, once; this only hands new rules to the links (`set_alert_rules`). The app's
notification choices (ui/alerts/notification_choices.py) own one `AppAlerts`; the roster's sessions are added and
removed here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from pathlib import Path
from typing import Final

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar, QToolButton

from tenant_events.alert_settings import AlertSettings, WorkingHours
from tenant_events.alerts.backtest import Backtest, backtest
from tenant_events.alerts.delivery import MuteState
from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.history import RuleTrial, try_rule
from tenant_events.alerts.rule_model import Rule
from tenant_events.entities.sentences import describe_stored
from tenant_events.errors import StorageError
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.tenant.silences import Silences
from tenant_events.ui.alerts.alert_book import AlertBook, InboxEntry
from tenant_events.ui.alerts.alert_notes import AlertNotes
from tenant_events.ui.alerts.desktop_notifier import Notifier
from tenant_events.ui.alerts.inbox_window import InboxWindow
from tenant_events.ui.alerts.quiet_actions import QuietActions
from tenant_events.ui.alerts.table_filter import show_alert_events
from tenant_events.ui.tenant_session import TenantSession
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.events import StoredEvent
from tenant_events.values.silences import Silence, silencing

log = logging.getLogger(__name__)


def _trial(path: Path, rule: Rule, hours: WorkingHours, profile: str, days: float) -> RuleTrial | None:
    if not path.exists():
        return None
    with AlertInbox(path) as inbox:
        return try_rule(inbox, rule, hours=hours, profile=profile, days=days)


def _backtest(path: Path, rule: Rule, standing: Rule | None, hours: WorkingHours, profile: str) -> Backtest:
    with AlertInbox(path) as inbox:
        return backtest(inbox, rule, hours=hours, profile=profile, standing=standing)


INBOX_KEYS: Final = "Ctrl+Shift+A"
MUTE_TICK_MS: Final = 15_000  # the tray's "until 14:30" and badge follow the clock this often
SILENCES_LOOK_MS: Final = 1_000  # a silence made or lifted elsewhere (a command, a teammate) shows this soon


def _log_rule_errors(settings: AlertSettings, profile: str) -> None:
    for error in rule_set(settings).errors:
        log.warning("%s: %s (the rule does not run; fix it in Settings → Alert rules)", profile, error)


class AppAlerts(QObject):
    unread_changed = Signal(int)
    entries_changed = Signal(object, int)  # the newest InboxEntry list (up to 5), unread count
    mute_changed = Signal(object, int)  # alerts.delivery.MuteState, unread count

    def __init__(self, window: MainWindow, notifier: Notifier, settings: Settings, paths: AppPaths) -> None:
        super().__init__(window)
        self.window, self.settings = window, settings
        self.paths = paths
        self._rules = settings.alerts.model_copy(deep=True)  # what the links run, to see a change
        self._rule_set = rule_set(settings.alerts)
        self.book = AlertBook(paths.database_file)
        self.notes = AlertNotes(notifier, settings.notifications, self)
        self.notes.alert_requested.connect(self.open_inbox)
        self.notes.renotify = self._renotify
        self.silences = SilenceBook.of(paths)
        self.notes.silenced = self.silenced
        # every silence made or lifted in the app: shared with a hub tenant's team through its session's mirror
        self.silence_keeper = Silences(
            paths, self.silences, running=lambda p: getattr(self.sessions.get(p), "team_silences", None)
        )
        self.quiet = QuietActions(paths, self.silence_keeper, self)
        self.quiet.changed.connect(self.refresh)
        self.quiet.problem.connect(lambda text: self.window.statusBar().showMessage(text, 15000))
        self.notes.current = lambda profile, alert_id: (
            entry.alert if (entry := self.book.get(profile, alert_id)) is not None else None
        )
        self.sessions: dict[str, TenantSession] = {}
        self.inbox: InboxWindow | None = None
        self.button: QToolButton | None = None  # the menu bar corner's "Alerts" button, once a window has one
        self.unread = 0
        self.mute = MuteState("")
        # the chip's alert (tenant, number) and its count when its events were shown
        self._chip_seen: tuple[tuple[str, int], int] | None = None
        self._refresh_soon = QTimer(self)
        self._refresh_soon.setSingleShot(True)
        self._refresh_soon.setInterval(150)  # a catch-up's steps come many a second: one refresh for them
        self._refresh_soon.timeout.connect(self.refresh)
        self.notes.alerts_changed.connect(lambda _t: self._refresh_soon.start())
        self._mute_timer = QTimer(self)
        self._mute_timer.setInterval(MUTE_TICK_MS)
        self._mute_timer.timeout.connect(self._tick)
        self._mute_timer.start()
        self._silences_seen = self._silences_now()
        self._silences_timer = QTimer(self)
        self._silences_timer.setInterval(SILENCES_LOOK_MS)
        self._silences_timer.timeout.connect(self._look_at_silences)
        self._silences_timer.start()
        self.action = QAction("&Alerts inbox", window)
        self.action.setShortcut(QKeySequence(INBOX_KEYS))
        self.action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        self.action.setIconText("Alerts")
        self.action.setToolTip(f"Alerts the rules raised, newest first ({INBOX_KEYS})")
        self.action.triggered.connect(lambda: self.open_inbox("", 0))
        window.addAction(self.action)
        window.menu_actions.all.append(self.action)
        self._add_to_window(window)
        self.refresh()

    def silenced(self, profile: str, alert: StoredAlert) -> Silence | None:
        """The silence that holds the alert now (the silences file is read again when it changed)."""
        return silencing(self.silences.all(), alert, profile, time.time())

    def _renotify(self, rule_id: str) -> bool:
        """The rule's choice whether its warning alerts notify again at each firing (values/alert_lifecycle.py)."""
        rule = self._rule_set.get(rule_id)
        return rule.renotify if rule is not None else True

    def _add_to_window(self, window: MainWindow) -> None:
        """The View menu entry and an "Alerts" button in the menu bar's corner (beside Follow and Settings)."""
        for menu in window.menuBar().findChildren(QMenu):
            if menu.title() == "&View":
                menu.addSeparator()
                menu.addAction(self.action)
        button = self.button = QToolButton()
        button.setDefaultAction(self.action)
        button.setAccessibleName("Alerts inbox")
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        corner = window.menu_actions.corner
        layout = corner.layout() if corner is not None else None
        if corner is not None and layout is not None:
            layout.addWidget(button)
            corner.adjustSize()

    def _fit_corner(self) -> None:
        """The menu bar sizes its corner once, when it is set: set it again so "Alerts (12)" is not cut to
        "Ale…12)" when the count grows."""
        corner = self.button.parentWidget() if self.button is not None else None
        bar = corner.parentWidget() if corner is not None else None
        if corner is not None and isinstance(bar, QMenuBar):
            corner.adjustSize()
            bar.setCornerWidget(corner, Qt.Corner.TopRightCorner)

    # -- tenants -------------------------------------------------------------------------------------------------
    def add_session(self, session: TenantSession) -> None:
        """Listen to what the rules of the session's link raise (the roster built the link with these rules)."""
        name = session.name
        session.alerts_raised.connect(lambda step: self.notes.offer(name, step))
        team_changed = getattr(session, "team_triage_changed", None)  # a hub tenant: teammates' triage
        if team_changed is not None:
            team_changed.connect(self._refresh_soon.start)
        _log_rule_errors(self.settings.alerts, name)
        self.sessions[name] = session
        self.book.add(session.name)
        self._refresh_soon.start()

    def remove(self, name: str) -> None:
        self.sessions.pop(name, None)
        self.notes.forget(name)
        self.book.remove(name)
        self._refresh_soon.start()

    def apply(self, settings: Settings) -> None:
        """New settings: rules (each tenant's link runs them from its next evaluation on, nothing raised twice),
        do-not-disturb, quiet hours."""
        rules_changed = settings.alerts != self._rules
        self.settings, self._rules = settings, settings.alerts.model_copy(deep=True)
        if rules_changed:
            self._rule_set = rule_set(settings.alerts)
        self.notes.set_settings(settings.notifications)
        if rules_changed:
            for session in self.sessions.values():
                session.link.set_alert_rules(settings.alerts, strict=False)
                _log_rule_errors(settings.alerts, session.name)
        self.refresh_mute()

    async def close(self) -> None:
        self._mute_timer.stop()
        self._silences_timer.stop()
        self._refresh_soon.stop()
        await self.notes.close()
        if self.inbox is not None:
            self.inbox.close()
            self.inbox.deleteLater()  # no parent to take it along
            self.inbox = None
        self.book.close()

    # -- state on the window and the tray --------------------------------------------------------------------------
    def refresh(self, *, reload_inbox: bool = True) -> None:
        self.unread = self.book.unread()
        label = f"Alerts ({self.unread})" if self.unread else "Alerts"
        if label != self.action.iconText():
            self.action.setIconText(label)
            self._fit_corner()
        self.action.setText(f"&Alerts inbox ({self.unread} unread)" if self.unread else "&Alerts inbox")
        self.entries_changed.emit(self.book.entries(limit=5), self.unread)
        if reload_inbox and self.inbox is not None and self.inbox.isVisible():
            self.inbox.reload()
        self.refresh_mute()
        self.unread_changed.emit(self.unread)
        self._follow_chip()
        self.notes.look_again()

    def _follow_chip(self) -> None:
        """The table shown by an alert's chip takes in the events that joined the alert since: the rules link an
        event to its alert after the table took in that event, so the filter is applied again when the alert's
        count changed (only then: applying it again moves the table back to its top)."""
        pick = self.window.filter_bar.alert_chip.pick
        if pick is None or self._chip_seen is None or self._chip_seen[0] != (pick.tenant, pick.alert_id):
            return
        entry = self.book.get(*self._chip_seen[0])
        count = entry.alert.event_count if entry is not None else None
        if count is not None and count != self._chip_seen[1]:
            self._chip_seen = (self._chip_seen[0], count)
            self.window.filter_bar.filter_changed.emit()

    def _tick(self) -> None:
        """The clock moved: a snooze that ended brings its alert back to the count (store/alert_triage.py)."""
        if self.book.unread() != self.unread:
            self.refresh()
        else:
            self.refresh_mute()
            self.notes.look_again()  # an alert read here, then triaged elsewhere

    def _silences_now(self) -> tuple[tuple[str, float], ...]:
        """The silences holding now (the file is read again only when it changed: one stat)."""
        return tuple(sorted((s.id, s.ends_at) for s in self.silences.active()))

    def _look_at_silences(self) -> None:
        """A silence made, lifted or ended anywhere — this window, a command, a teammate through the hub —
        dims or undims the inbox's rows at once, not at its next reload."""
        now = self._silences_now()
        if now != self._silences_seen:
            self._silences_seen = now
            if self.inbox is not None and self.inbox.isVisible():
                self.inbox.model.restyle()

    def refresh_mute(self) -> None:
        """Do-not-disturb / quiet hours now (the tray shows them: badge, menu line with its end, tooltip)."""
        self.mute = self.notes.quiet.state(time.time())
        self.mute_changed.emit(self.mute, self.unread)

    # -- the inbox -----------------------------------------------------------------------------------------------
    def open_inbox(self, profile: str = "", alert_id: int = 0) -> InboxWindow:
        """Show the inbox; with an alert (a notification or a tray entry was clicked) open it: selected and read,
        by the inbox's one rule."""
        if self.inbox is None:  # a window of its own (no parent), which the main window can cover
            self.inbox = InboxWindow(self.book, self._events)
            self.inbox.events_requested.connect(self._show_events)
            self.inbox.event_requested.connect(self.window.select_event)
            self.inbox.read_changed.connect(lambda: self.refresh(reload_inbox=False))  # it is up to date
            self.inbox.triage.team = lambda profile: getattr(self.sessions.get(profile), "team_triage", None)
            self.inbox.triage.settled.connect(self._settled)
            self.inbox.model.silenced = lambda entry: self.silenced(entry.profile, entry.alert)
            self.inbox.quiet.silence_requested.connect(self.quiet.silence)
            self.inbox.quiet.exception_requested.connect(self.quiet.never_for)
            inbox_window = self.inbox
            self.quiet.dialog_parent = lambda: inbox_window
        inbox = self.inbox
        inbox.reload(place=True)  # opened: every alert in its place
        if profile and alert_id:  # selected before it shows: showing the inbox opens the alert it shows
            inbox.select(profile, alert_id, quiet=True)
        inbox.show()
        inbox.raise_()
        inbox.activateWindow()
        inbox.table.setFocus()  # the keys move through the alerts at once
        if profile and alert_id:
            inbox.open_alert(profile, alert_id)
        else:
            inbox.show_latest()
        return inbox

    def _settled(self, profile: str, alert_id: int, _state: str) -> None:
        """Triaged in the inbox: acknowledged or resolved, no repeats of it and its notification goes away;
        snoozed, said again when the snooze ends. (The rules hear of it too, and the destinations get a resolve:
        store/alert_triage.py.)"""
        entry = self.book.get(profile, alert_id)
        if entry is not None:
            self.notes.settle(profile, entry.alert)
        session = self.sessions.get(profile)
        if session is not None:
            session.link.nudge_alerts()

    def mark_all_read(self) -> None:
        if self.book.mark_all_read(self.book.entries(limit=10_000)):
            self.refresh()

    async def backtest(self, rule: Rule, standing: Rule | None) -> list[tuple[str, Backtest]]:
        """The rule (as edited) backtested over each tenant's whole stored history, beside `standing`."""
        hours = self.settings.alerts.working_hours
        out = []
        for profile in self.book.profiles:
            path = self.paths.database_file(profile)
            if path.exists():
                out.append(
                    (profile, await asyncio.to_thread(_backtest, path, rule, standing, hours, profile))
                )
        return out

    async def try_rule(self, rule: Rule, days: float = 7.0) -> str:
        """ "acme: would have fired 3 times in the last 7 days (…)", a line per tenant with a store."""
        hours = self.settings.alerts.working_hours
        lines = []
        for profile in self.book.profiles:
            trial = await asyncio.to_thread(
                _trial, self.paths.database_file(profile), rule, hours, profile, days
            )
            if trial is not None:
                lines.append(f"{profile}: {trial.sentence()}")
        return "\n".join(lines) or "No events stored yet to try the rule on."

    def _events(self, profile: str, seqs: list[int]) -> list[StoredEvent]:
        """The events behind an alert, each summary said with the directory's names (as the table says it)."""
        session = self.sessions.get(profile)
        reader = session.ui_reader if session is not None else None
        if reader is None:
            return []
        events = [ev for seq in seqs if (ev := reader.get(seq)) is not None]
        try:
            said = describe_stored(reader.directory(), [ev.seq for ev in events])
        except StorageError as exc:  # the names are a nicety: the stored summaries still say what happened
            log.info("%s: no names for the alert's events (%s)", profile, exc)
            return events
        return [dataclasses.replace(ev, summary=s.text) if (s := said.get(ev.seq)) else ev for ev in events]

    def _show_events(self, entry: InboxEntry, _events: list[StoredEvent]) -> None:
        self._chip_seen = ((entry.profile, entry.alert.id), entry.alert.event_count)
        show_alert_events(self.window, entry)
