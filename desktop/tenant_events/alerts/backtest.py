"""A rule backtested over the whole stored history: the alerts it (or a changed version of it, before saving)
would have raised, per day, against the rule as it stands, and the days over its noise budget.

    backtests(inbox, rules, standing=…, since_ms=0) ─▶ history.replay_all: one pass for all the rules and the
    standing versions that differ ─▶ alerts per day (UTC, by the event time that raised each) ─▶ a
    Backtest each: days, totals, the difference, the days over `max_alerts_per_day`

Every event is evaluated as live, as `rules --try` does (history.py), read through the store's history read over
both tiers. `rules backtest` and `rules test` (its noise budgets) print the same reports (`lines`, `verdict`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.history import replay_all
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.rule_model import Rule
from tenant_events.store import AlertInbox

_TWIN: Final = (
    "\x1estanding"  # the id suffix of a standing version replayed beside the rule (no group key has it)
)


def _n(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def per_day(alerts: list[OpenAlert]) -> dict[str, int]:
    """Alerts per UTC day of the firing that raised each, in day order."""
    counted = Counter(_day(a.raised_ms) for a in alerts)
    return dict(sorted(counted.items()))


@dataclass(frozen=True, slots=True)
class Backtest:
    """What a rule would have raised over a period, day by day, beside the rule as it stands (if given)."""

    rule_id: str
    name: str
    since_ms: int
    until_ms: int
    days: dict[str, int]  # day (YYYY-MM-DD, UTC) → alerts
    firings: int
    standing: dict[str, int] | None = None  # the rule as it stands, per day (None: nothing to compare)
    budget: int | None = None  # max_alerts_per_day
    seconds: float = 0.0  # how long the backtest took
    over: dict[str, int] = field(default_factory=dict)  # the days over the budget

    @property
    def alerts(self) -> int:
        return sum(self.days.values())

    def all_days(self) -> list[str]:
        return sorted(set(self.days) | set(self.standing or {}))

    def lines(self) -> list[str]:
        """The report as text: a row per day with alerts, the totals, the days over the budget."""
        compare = self.standing is not None
        head = f"{'day':<10}  {'alerts':>6}" + (f"  {'as it stands':>12}  {'diff':>5}" if compare else "")
        rows = [head]
        for day in self.all_days():
            n = self.days.get(day, 0)
            row = f"{day:<10}  {n:>6}"
            if compare:
                was = (self.standing or {}).get(day, 0)
                row += f"  {was:>12}  {n - was:>+5}"
            if day in self.over:
                row += f"  over the budget of {self.budget}"
            rows.append(row)
        total = f"{_n(self.alerts, 'alert')} ({_n(self.firings, 'firing')}) on {_n(len(self.days), 'day')}"
        if compare:
            was = sum((self.standing or {}).values())
            total += f"; as it stands {was} ({self.alerts - was:+d})"
        if self.budget is not None:
            total += f"; {_n(len(self.over), 'day')} over the budget of {self.budget} a day"
        rows.append(total)
        return rows

    def verdict(self, where: str) -> str:
        """One line on the noise budget (there is one): 'ok' or 'FAIL' and the days over it."""
        days = ", ".join(f"{d} ({n})" for d, n in self.over.items())
        since = "the first stored event" if not self.since_ms else _day(self.since_ms)
        said = f"over it on {days}" if days else f"within it on each day since {since}"
        return f"{'FAIL' if days else 'ok  '} {self.rule_id}: budget {self.budget} alerts a day, {said} ({where})"


def backtest(
    inbox: AlertInbox,
    rule: Rule,
    *,
    hours: WorkingHours,
    profile: str = "",
    standing: Rule | None = None,
    since_ms: int = 0,
    now: float | None = None,
) -> Backtest:
    """Replay `rule` (and `standing`, the rule as saved, when it is given and differs) over the stored events
    from `since_ms` (0: all of them)."""
    found = backtests(
        inbox,
        [rule],
        hours=hours,
        profile=profile,
        standing={rule.id: standing} if standing is not None else None,
        since_ms=since_ms,
        now=now,
    )
    return found[0]


def backtests(
    inbox: AlertInbox,
    rules: Sequence[Rule],
    *,
    hours: WorkingHours,
    profile: str = "",
    standing: Mapping[str, Rule] | None = None,
    since_ms: int = 0,
    now: float | None = None,
) -> list[Backtest]:
    """`backtest` of each of `rules` (distinct ids), all in one pass over the history, with the standing versions
    that differ from them. Each report's `seconds` is the time of the whole."""
    at = time.time() if now is None else now
    started = time.perf_counter()
    saved = standing or {}
    twins = {  # the standing versions that differ, under ids of their own, in the same pass
        r.id: saved[r.id].model_copy(update={"id": f"{r.id}{_TWIN}"})
        for r in rules
        if r.id in saved and saved[r.id].model_dump(mode="json") != r.model_dump(mode="json")
    }
    raised = replay_all(
        inbox, [*rules, *twins.values()], hours=hours, profile=profile, since_ms=since_ms, now=at
    )
    before = {rule_id: raised[twin.id] for rule_id, twin in twins.items()}
    seconds = time.perf_counter() - started
    reports = []
    for rule in rules:
        days = per_day(raised[rule.id])
        budget = rule.max_alerts_per_day
        was: dict[str, int] | None = None
        if rule.id in saved:
            was = per_day(before[rule.id]) if rule.id in before else days
        reports.append(
            Backtest(
                rule_id=rule.id,
                name=rule.name,
                since_ms=since_ms,
                until_ms=int(at * 1000),
                days=days,
                firings=sum(a.write.occurrences for a in raised[rule.id]),
                standing=was,
                budget=budget,
                seconds=seconds,
                over={d: n for d, n in days.items() if budget is not None and n > budget},
            )
        )
    return reports
