"""Which alerts become desktop notifications, how urgent, and when do-not-disturb and quiet hours hold them.

Qt-free decisions for the notifier and the tray (ui/ renders them):
  * urgency follows the rule's severity: info → low, warning → normal, critical → critical;
  * a live alert notifies when raised, and again at each firing folded into it (a new version): a critical one
    always, others unless the user turned it off for the rule (`renotify`, values/alert_lifecycle.py);
  * an unacknowledged critical alert is said again every `repeat_minutes` (`repeats`) until it is
    acknowledged, snoozed or resolved (`settle` forgets it: the notifier withdraws it then);
  * catch-up alerts are held and become ONE notification, "While you were away: mass deletion × 2, admin role
    assigned × 5 (3 groups)", once the catch-up has been quiet for `hold_s`;
  * a flood folds: one rule's alerts said in one step are one notification ("Organization connection changed ·
    8 organizations"), and those within FOLD_S (5 s) of the rule's last notification are held and said as one
    when that time is up (`folded`), so a rule is said at most once per 5 s;
  * a silenced alert (a silence of the team's or one's own matches it, values/silences.py) never notifies;
  * nothing notifies while muted: do-not-disturb (on, or until a time) or the quiet hours (local wall time on
    the chosen days; 22:00–07:00 spans midnight); critical alerts pass when the user allows it
    (`critical_passes_dnd`). Muted alerts are still stored: the inbox and the unread count have them.
`QuietTimes.state(now)` says what mutes and until when, for the tray's menu text, tooltip and badge.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from datetime import time as wall_time
from typing import Final, Literal

from tenant_events.alert_settings import WEEKDAYS
from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.presentation import FOLD_S, catch_up_tally, fold_title, fold_why, title, why
from tenant_events.settings import NotificationSettings
from tenant_events.values.alert_lifecycle import Phase, renotifies, repeat_due, withdraws
from tenant_events.values.alerts import Severity, StoredAlert

Urgency = Literal["low", "normal", "critical"]
URGENCY: Final[dict[Severity, Urgency]] = {"info": "low", "warning": "normal", "critical": "critical"}
_RANK: Final[dict[Severity, int]] = {"info": 0, "warning": 1, "critical": 2}


def urgency_for(severity: Severity) -> Urgency:
    return URGENCY[severity]


@dataclass(frozen=True, slots=True)
class MuteState:
    """Why notifications are held now, and until when (unix s; None: until turned off)."""

    reason: Literal["", "do_not_disturb", "quiet_hours"]
    until: float | None = None

    @property
    def muted(self) -> bool:
        return bool(self.reason)

    def text(self, tz: tzinfo | None = None) -> str:
        """ "Do not disturb until 14:30", "Quiet hours until 07:00", "Do not disturb" or ""."""
        if not self.reason:
            return ""
        label = "Do not disturb" if self.reason == "do_not_disturb" else "Quiet hours"
        if self.until is None:
            return label
        return f"{label} until {datetime.fromtimestamp(self.until, tz).strftime('%H:%M')}"


class QuietTimes:
    """Do-not-disturb and quiet hours from the settings, decided at a given time (local wall time or `tz`)."""

    def __init__(self, settings: NotificationSettings, tz: tzinfo | None = None) -> None:
        self.settings = settings
        self.tz = tz

    def state(self, now: float) -> MuteState:
        s = self.settings
        if s.do_not_disturb:
            return MuteState("do_not_disturb")
        if s.do_not_disturb_until is not None and now < s.do_not_disturb_until:
            return MuteState("do_not_disturb", s.do_not_disturb_until)
        end = self._quiet_until(now)
        return MuteState("quiet_hours", end) if end is not None else MuteState("")

    def allows(self, severity: Severity, now: float) -> bool:
        """Whether an alert of `severity` may notify now."""
        if not self.state(now).muted:
            return True
        return severity == "critical" and self.settings.critical_passes_dnd

    def _quiet_until(self, now: float) -> float | None:
        """The end of the quiet hours `now` falls in (unix s), or None outside them."""
        hours = self.settings.quiet_hours
        if hours is None or hours[0] == hours[1]:
            return None
        start, end = (wall_time.fromisoformat(t) for t in hours)
        moment = datetime.fromtimestamp(now, self.tz).astimezone(self.tz)
        days = {WEEKDAYS.index(d) for d in self.settings.quiet_days}
        at, today = moment.timetz().replace(tzinfo=None), moment.weekday()
        if start < end:
            inside = today in days and start <= at < end
        elif at >= start:
            inside = today in days
        else:  # the early-morning part belongs to the night that started the day before
            inside = at < end and (today - 1) % 7 in days
        if not inside:
            return None
        ends = moment.replace(hour=end.hour, minute=end.minute, second=0, microsecond=0)
        if ends <= moment:
            ends += timedelta(days=1)
        return ends.timestamp()


CATCH_UP_TITLE: Final = "While you were away"


@dataclass(frozen=True, slots=True)
class PlannedNotification:
    """One notification to show; clicking it opens `alert_ids[0]` (the inbox for a summary). `why` is the line
    under the title, without the tenant: `text(tenant)` composes the body with the name the front end uses."""

    title: str
    why: str
    urgency: Urgency
    alert_ids: tuple[int, ...]
    summary: bool = False

    def text(self, tenant: str) -> str:
        """The notification's body: why, then the tenant on a line of its own."""
        return f"{self.why}\n{tenant}"


class NotificationPlanner:
    """Turns evaluation steps into notifications: live alerts at once, a catch-up as one summary, a critical
    alert nobody has taken in hand again every `repeat_s` (0: never). `renotify(rule id)`: the rule's choice."""

    def __init__(
        self,
        quiet: QuietTimes,
        *,
        hold_s: float = 10.0,
        clock: Callable[[], float] = time.time,
        renotify: Callable[[str], bool] = lambda _rule: True,
        repeat_s: float = 3600.0,
        silenced: Callable[[StoredAlert], bool] = lambda _alert: False,
    ) -> None:
        """`silenced(alert)`: a silence holds it now (values/silences.py): stored and listed, never said."""
        self.quiet = quiet
        self.silenced = silenced
        self.hold_s = hold_s
        self.clock = clock
        self.renotify = renotify
        self.repeat_s = repeat_s
        self._held: dict[int, StoredAlert] = {}
        self._held_at: float | None = None
        self._said: dict[int, tuple[float, StoredAlert]] = {}  # alert id → when it was last said, as it was
        self._rule_said: dict[str, float] = {}  # rule id → when it was last said (a flood folds, FOLD_S)
        self._folding: dict[str, dict[int, StoredAlert]] = {}  # rule id → alerts held to be said as one

    def offer(self, result: StepResult) -> list[PlannedNotification]:
        """The notifications to show now for one step's alerts (catch-up alerts are held; see `summary`)."""
        now = self.clock()
        live: list[StoredAlert] = []
        for alert in result.settled:
            self.settle(alert)
        for alert in result.raised:
            if not alert.notify or self.silenced(alert):
                continue
            if alert.catch_up:
                self._hold(alert, now)
            elif self.quiet.allows(alert.severity, now):
                live.append(alert)
        for alert in result.updated:
            if self.silenced(alert):
                self._held.pop(alert.id, None)
            elif alert.id in self._held:
                self._hold(alert, now)  # a summary still collecting: keep its latest count
            elif (
                alert.id in result.refired
                and alert.notify
                and not alert.catch_up
                and renotifies(alert.severity, self.renotify(alert.rule_id))
                and self.quiet.allows(alert.severity, now)
            ):  # a firing folded into its open alert: a new version is news
                live.append(alert)
        return self._fold(live, now)

    def _fold(self, live: list[StoredAlert], now: float) -> list[PlannedNotification]:
        """A flood folds: one rule's alerts said together, and those within FOLD_S of the rule's last
        notification held until then (`folded`)."""
        by_rule: dict[str, list[StoredAlert]] = {}
        for alert in live:
            by_rule.setdefault(alert.rule_id, []).append(alert)
        out: list[PlannedNotification] = []
        for rule_id, alerts in by_rule.items():
            last = self._rule_said.get(rule_id)
            if last is not None and now - last < FOLD_S:
                held = self._folding.setdefault(rule_id, {})
                held.update((a.id, a) for a in alerts)
                continue
            out.append(self._say_all(alerts, now))
        return out

    def _say_all(self, alerts: list[StoredAlert], now: float) -> PlannedNotification:
        if len(alerts) == 1:
            said = self._say(alerts[0], now)
        else:
            for alert in alerts:
                self._said[alert.id] = (now, alert)
            worst = max(alerts, key=lambda a: _RANK[a.severity]).severity
            said = PlannedNotification(
                fold_title(alerts), fold_why(alerts), urgency_for(worst), tuple(a.id for a in alerts)
            )
        self._rule_said[alerts[0].rule_id] = now
        return said

    def folded(self) -> list[PlannedNotification]:
        """The alerts held by a flood, each rule's said as one once FOLD_S has passed since its last."""
        now = self.clock()
        out = []
        for rule_id in [r for r in self._folding if now - self._rule_said.get(r, 0.0) >= FOLD_S]:
            held = self._folding.pop(rule_id)
            alerts = [a for a in held.values() if not self.silenced(a) and self.quiet.allows(a.severity, now)]
            if alerts:
                out.append(self._say_all(sorted(alerts, key=lambda a: a.id), now))
        return out

    def fold_due(self) -> float | None:
        """When `folded` will have something (unix s), for a timer; None when nothing is held."""
        due = [self._rule_said.get(r, 0.0) + FOLD_S for r in self._folding]
        return min(due) if due else None

    def _say(self, alert: StoredAlert, now: float, prefix: str = "") -> PlannedNotification:
        self._said[alert.id] = (now, alert)
        return PlannedNotification(
            prefix + title(alert), why(alert), urgency_for(alert.severity), (alert.id,)
        )

    def settle(self, alert: StoredAlert) -> None:
        """The alert was triaged: acknowledged or resolved, no more repeats of it; snoozed or reopened, its
        repeats follow its phase (`repeats`)."""
        said = self._said.get(alert.id)
        if said is None:
            return
        if withdraws(alert.phase(self.clock())):
            del self._said[alert.id]
        else:
            self._said[alert.id] = (said[0], alert)

    def repeats(
        self, fresh: Callable[[int], StoredAlert | None] = lambda _id: None
    ) -> list[PlannedNotification]:
        """The critical alerts nobody has taken in hand, said again now that `repeat_s` has passed; `fresh(id)`:
        the alert as stored now (a teammate's triage, or one made where no step of this link saw it)."""
        now = self.clock()
        out = []
        for last, said in list(self._said.values()):
            alert = fresh(said.id) or said
            phase = alert.phase(now)
            if withdraws(phase) or self.silenced(alert):
                del self._said[alert.id]
                continue
            if phase is Phase.SNOOZED and alert.snoozed_until is not None:
                # said again when the snooze ends, if it is still firing then
                self._said[alert.id] = (max(last, alert.snoozed_until - self.repeat_s), alert)
                continue
            due = repeat_due(phase, alert.severity, last, self.repeat_s, now)
            if due and self.quiet.allows(alert.severity, now):
                out.append(self._say(alert, now, "Still firing: "))
        return out

    def next_repeat(self) -> float | None:
        """When the next repeat is due (unix s), for a timer; None when none can be."""
        if self.repeat_s <= 0:
            return None
        due = [last + self.repeat_s for last, a in self._said.values() if a.severity == "critical"]
        return min(due) if due else None

    def summary(self) -> PlannedNotification | None:
        """The catch-up summary once the catch-up has been quiet for `hold_s` (then it is handed out once)."""
        if self._held_at is None or self.clock() - self._held_at < self.hold_s:
            return None
        alerts = sorted((a for a in self._held.values() if not self.silenced(a)), key=lambda a: a.id)
        self._held, self._held_at = {}, None
        if not alerts:
            return None
        worst = max(alerts, key=lambda a: _RANK[a.severity]).severity
        if not self.quiet.allows(worst, self.clock()):
            return None
        return PlannedNotification(
            CATCH_UP_TITLE,
            catch_up_tally(alerts),
            urgency_for(worst),
            tuple(a.id for a in alerts),
            summary=True,
        )

    def summary_due(self) -> float | None:
        """When `summary` will have something (unix s), for a timer; None when nothing is held."""
        return None if self._held_at is None else self._held_at + self.hold_s

    def _hold(self, alert: StoredAlert, now: float) -> None:
        self._held[alert.id] = alert
        self._held_at = now
