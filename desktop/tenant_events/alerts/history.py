"""Trying a rule on stored history: "would have fired 3 times in the last 7 days", before switching it on.

The rule runs in a RuleEngine of its own over the stored events of the period, oldest first, with nothing
written: the same matching, windows and coalescing as live evaluation, every event treated as live.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.alerts.rule_model import Rule
from tenant_events.store import AlertInbox
from tenant_events.values.alert_lifecycle import renotifies

_NEVER_CATCH_UP = 1e12  # seconds: every event of the past is evaluated as if it were live


@dataclass(frozen=True, slots=True)
class RuleTrial:
    """What a rule would have done over a period."""

    rule_id: str
    days: float
    firings: int  # times it would have fired
    alerts: int  # alerts after coalescing (one per group)
    events: int  # events behind those alerts
    first_time: str | None = None
    last_time: str | None = None
    notifications: int | None = None  # what the desktop would have said (None: one per alert)

    def sentence(self) -> str:
        period = "day" if self.days == 1 else f"{self.days:g} days"
        if not self.firings:
            return f"would not have fired in the last {period}"
        times = "once" if self.firings == 1 else f"{self.firings} times"
        said = self.alerts if self.notifications is None else self.notifications
        notes = "1 notification" if said == 1 else f"{said} notifications"
        events = "1 event" if self.events == 1 else f"{self.events:,} events"
        return f"would have fired {times} in the last {period} ({notes}, {events})"


def try_rule(
    inbox: AlertInbox,
    rule: Rule,
    *,
    hours: WorkingHours,
    profile: str = "",
    days: float = 7.0,
    now: float | None = None,
) -> RuleTrial:
    """Run `rule` (enabled or not) over the events stored for the last `days` days."""
    at = time.time() if now is None else now
    alerts = replay(
        inbox, rule, hours=hours, profile=profile, since_ms=int((at - days * 86400) * 1000), now=at
    )
    return RuleTrial(
        rule_id=rule.id,
        days=days,
        firings=sum(a.write.occurrences for a in alerts),
        alerts=len(alerts),
        events=sum(a.write.event_count for a in alerts),
        notifications=sum(
            _said(a.write.severity, a.write.occurrences, rule) for a in alerts if a.write.notify
        ),
        first_time=alerts[0].write.first_time if alerts else None,
        last_time=max((a.write.last_time for a in alerts), default=None),
    )


def replay(
    inbox: AlertInbox,
    rule: Rule,
    *,
    hours: WorkingHours,
    profile: str = "",
    since_ms: int = 0,
    now: float | None = None,
) -> list[OpenAlert]:
    """The alerts `rule` (enabled or not) would have raised over the events stored from `since_ms` until `now`,
    oldest first, read through the store's history read (`AlertInbox.history_rows`, both tiers)."""
    return replay_all(inbox, [rule], hours=hours, profile=profile, since_ms=since_ms, now=now)[rule.id]


def replay_all(
    inbox: AlertInbox,
    rules: Sequence[Rule],
    *,
    hours: WorkingHours,
    profile: str = "",
    since_ms: int = 0,
    now: float | None = None,
) -> dict[str, list[OpenAlert]]:
    """`replay` of several rules (distinct ids) in one pass over the history, as live evaluation runs them all
    together: each event is read and decoded once for all of them. Per rule id, its alerts, oldest first."""
    if len({r.id for r in rules}) != len(rules):
        raise ValueError("rules replayed together need distinct ids")
    at = time.time() if now is None else now
    engine = RuleEngine(
        [r.model_copy(update={"enabled": True}) for r in rules],
        hours=hours,
        profile=profile,
        catch_up_after_s=_NEVER_CATCH_UP,
        clock=lambda: at,
    )
    seen: dict[int, OpenAlert] = {}
    if rules:
        for segment in inbox.history_rows(since_ms, int(at * 1000) + 1, engine.types, engine.raw_types):
            for alert in engine.feed([segment]):
                seen[id(alert)] = alert
    raised: dict[str, list[OpenAlert]] = {r.id: [] for r in rules}
    for alert in sorted(seen.values(), key=lambda a: a.first_time_ms):
        raised[alert.write.rule_id].append(alert)
    return raised


def _said(severity: str, occurrences: int, rule: Rule) -> int:
    """Notifications an alert raises live: one when raised, and one for each firing folded into it where that
    is news (alert_lifecycle.renotifies)."""
    return 1 + (occurrences - 1 if renotifies(severity, rule.renotify) else 0)
