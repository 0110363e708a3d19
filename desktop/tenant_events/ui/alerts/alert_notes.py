"""Alert notifications: each tenant's evaluation steps → `NotificationPlanner` → the desktop notifier.

    TenantSession.alerts_raised(StepResult) + tenant ──▶ AlertNotes.offer ──▶ planner (per tenant: alert ids are
    per database) ──▶ Notifier.show(title, body, urgency, clicked) ──▶ dunst / the tray balloon

The decisions (urgency from the rule's severity, each firing said again, repeats of an unacknowledged critical
alert, the catch-up summary, do-not-disturb and quiet hours) are the Qt-free alerts/delivery.py's, over
values/alert_lifecycle.py; this times the catch-up summary and the repeats, takes an alert's notification away
once it is acknowledged or resolved (here, in another process, by going quiet) and every one when the app quits,
and turns a click into `alert_requested(tenant, alert_id)` (0: the inbox, for a summary of several alerts).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Final

from PySide6.QtCore import QObject, QTimer, Signal

from tenant_events.alerts.delivery import NotificationPlanner, PlannedNotification, QuietTimes
from tenant_events.alerts.evaluator import StepResult
from tenant_events.settings import NotificationSettings
from tenant_events.ui.alerts.desktop_notifier import Notifier
from tenant_events.ui.task_set import TaskSet
from tenant_events.values.alert_lifecycle import Phase, withdraws
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)
LOOKED_AT: Final = 100  # the latest alert notifications looked at again for a triage made elsewhere


class AlertNotes(QObject):
    alert_requested = Signal(str, int)  # tenant, alert id (0: the inbox)
    alerts_changed = Signal(str)  # tenant: alerts were raised or updated (the inbox and unread counts)
    shown = Signal(str, object)  # tenant, PlannedNotification handed to the notifier

    def __init__(
        self,
        notifier: Notifier,
        settings: NotificationSettings,
        parent: QObject | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(parent)
        self.notifier = notifier
        self.settings = settings
        self.quiet = QuietTimes(settings)
        self._clock = clock
        self._planners: dict[str, NotificationPlanner] = {}
        self._tasks = TaskSet()
        # (tenant, alert id) → the alert's phase when its notification was put up (a refire of an acknowledged
        # alert is said again, acknowledged still: only a triage since then takes it away)
        self._up: dict[tuple[str, int], Phase] = {}
        self._summary_timer = QTimer(self)
        self._summary_timer.setSingleShot(True)
        self._summary_timer.timeout.connect(self._summaries)
        self._repeat_timer = QTimer(self)
        self._repeat_timer.setSingleShot(True)
        self._repeat_timer.timeout.connect(self._repeats)
        # rule id → its `renotify`, and (tenant, alert id) → the alert as stored now, so a repeat sees triage
        # this app did not evaluate (AppAlerts sets both)
        self.renotify: Callable[[str], bool] = lambda _rule: True
        self.current: Callable[[str, int], StoredAlert | None] = lambda _tenant, _id: None
        # (tenant, alert) → whether a silence holds it now (AppAlerts sets it from the silences file)
        self.silenced: Callable[[str, StoredAlert], object] = lambda _tenant, _alert: None

    def set_settings(self, settings: NotificationSettings) -> None:
        """New do-not-disturb / quiet hours / enabled / repeat settings (the planners share one QuietTimes)."""
        self.settings = settings
        self.quiet.settings = settings
        for planner in self._planners.values():
            planner.repeat_s = settings.repeat_minutes * 60
        self._arm_repeat()

    def offer(self, tenant: str, result: StepResult) -> None:
        """One evaluation step of `tenant`: notify what the planner says now, take away what was acknowledged or
        resolved, time the catch-up summary and the repeats."""
        self.alerts_changed.emit(tenant)
        now = self._clock()
        for alert in result.settled:  # (the planner hears of them through the result, below)
            if withdraws(alert.phase(now)):
                self._withdraw(tenant, alert.id)
        if not self.settings.enabled:
            return
        planner = self._planners.get(tenant)
        if planner is None:
            planner = self._planners[tenant] = NotificationPlanner(
                self.quiet,
                clock=self._clock,
                renotify=lambda rule: self.renotify(rule),
                repeat_s=self.settings.repeat_minutes * 60,
                silenced=functools.partial(self._silenced, tenant),
            )
        for planned in planner.offer(result):
            self._show(tenant, planned)
        self._arm_summary()
        self._arm_repeat()

    def _silenced(self, tenant: str, alert: StoredAlert) -> bool:
        return bool(self.silenced(tenant, alert))

    def settle(self, tenant: str, alert: StoredAlert) -> None:
        """The alert was triaged here (as it is stored now): acknowledged or resolved, no repeats of it and its
        notification taken away; snoozed, said again when the snooze ends."""
        planner = self._planners.get(tenant)
        if planner is not None:
            planner.settle(alert)
        if withdraws(alert.phase(self._clock())):
            self._withdraw(tenant, alert.id)

    def _withdraw(self, tenant: str, alert_id: int) -> None:
        self._up.pop((tenant, alert_id), None)
        self._tasks.spawn(self.notifier.withdraw(self._key(tenant, alert_id)))

    def look_again(self) -> None:
        """Take away the notification of each alert acknowledged or resolved since it was put up where no
        evaluation step said so: a team's alert triaged by a teammate or a command reaches this app through the
        hub's triage and the stored alert, not through rules of its own."""
        now = self._clock()
        for (tenant, alert_id), was in list(self._up.items()):
            alert = self.current(tenant, alert_id)
            phase = alert.phase(now) if alert is not None else was
            if phase != was and withdraws(phase):
                self._withdraw(tenant, alert_id)

    def forget(self, tenant: str) -> None:
        self._planners.pop(tenant, None)

    async def close(self) -> None:
        """Stop the timers and take every notification of the app away: alerts it no longer watches must not
        stay on the screen as if it did."""
        self._summary_timer.stop()
        self._repeat_timer.stop()
        await self._tasks.cancel()
        await self.notifier.withdraw_all()

    def _arm_repeat(self) -> None:
        due = [d for p in self._planners.values() if (d := p.next_repeat()) is not None]
        if due:
            self._repeat_timer.start(max(0, int((min(due) - self._clock()) * 1000)) + 50)
        else:
            self._repeat_timer.stop()

    def _repeats(self) -> None:
        for tenant, planner in list(self._planners.items()):
            for planned in planner.repeats(functools.partial(self.current, tenant)):
                self._show(tenant, planned)
        self._arm_repeat()

    def _arm_summary(self) -> None:
        """The catch-up summaries and the floods held to be said as one share a timer."""
        due = [d for p in self._planners.values() for d in (p.summary_due(), p.fold_due()) if d is not None]
        if due:
            wait_ms = max(0, int((min(due) - self._clock()) * 1000)) + 50
            self._summary_timer.start(wait_ms)

    def _summaries(self) -> None:
        for tenant, planner in list(self._planners.items()):
            planned = planner.summary()
            if planned is not None:
                self._show(tenant, planned)
            for planned in planner.folded():
                self._show(tenant, planned)
        self._arm_summary()

    def _show(self, tenant: str, planned: PlannedNotification) -> None:
        alert_id = 0 if planned.summary else planned.alert_ids[0]
        log.info("alert notification (%s): %s", planned.urgency, planned.title)

        def clicked() -> None:
            self.alert_requested.emit(tenant, alert_id)

        self.shown.emit(tenant, planned)
        text = planned.text(tenant)  # the tenant as the app names it, not the service's tenant id
        key = self._key(tenant, alert_id)  # the summary (0) too: a newer one takes the place of the last
        if alert_id:
            alert = self.current(tenant, alert_id)
            self._up.pop((tenant, alert_id), None)  # the newest last: the oldest go first past the bound
            self._up[(tenant, alert_id)] = alert.phase(self._clock()) if alert is not None else Phase.FIRING
            while len(self._up) > LOOKED_AT:
                del self._up[next(iter(self._up))]
        self._tasks.spawn(self.notifier.show(planned.title, text, planned.urgency, clicked, key))

    @staticmethod
    def _key(tenant: str, alert_id: int) -> str:
        return f"{tenant}\x1f{alert_id}"
