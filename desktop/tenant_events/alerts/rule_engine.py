"""Rules applied to stored events, in memory: which rows fire which rule, and which alert each firing joins.

No I/O: evaluator.py feeds it rows read from the store and writes what it returns; history.py feeds it past
rows to try a rule. Per rule, one alert is "open":

  * a firing folds into it when the two are close: live, within the rule's `coalesce_minutes` of the alert's
    last event (a burst of grants is one alert "× 5", one notification); caught up, while the same catch-up
    goes on — a backlog becomes ONE summary per rule, however long the time away was;
  * otherwise it starts a new alert, which becomes the open one.

An event is a catch-up event when it is older than `catch_up_after_s` as it is evaluated (a backlog after
sleep, a restart, a replay from a timestamp).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import orjson

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.matchers import WorkingHoursClock, compile_condition
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.rule_model import Rule
from tenant_events.alerts.windows import BurstWindow, Outcome
from tenant_events.store.alert_records import EvalRow, RowSegment, StoredAlert
from tenant_events.wire.event_types import EVENT_TYPE_NAMES

_NO_DATA: Final[Mapping[str, Any]] = {}


def eval_rows(segments: Iterable[RowSegment]) -> Iterator[EvalRow]:
    """The rows of segments as records (for the rare paths: restoring windows, tests)."""
    new = tuple.__new__
    for first, rows in segments:
        for seq, e in enumerate(rows, first) if first is not None else ((r[11], r) for r in rows):
            yield new(EvalRow, (seq, e[0], e[2], e[4], e[5], e[7], e[8], e[10]))


def event_data(row: EvalRow) -> Mapping[str, Any]:
    """The event's `data` object from the row's raw JSON (empty when absent or unreadable)."""
    if row.raw is None:
        return _NO_DATA
    try:
        data = orjson.loads(row.raw)["event"]["data"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return _NO_DATA
    return data if isinstance(data, dict) else _NO_DATA


class CompiledRule:
    """A rule ready to test rows, with its threshold state."""

    def __init__(self, rule: Rule, hours: WorkingHours, profile: str) -> None:
        self.rule = rule
        self.id = rule.id
        self.types = rule.event_types
        self.tests = [compile_condition(c) for c in rule.conditions]
        tod = rule.time_of_day
        self.hours = WorkingHoursClock(tod.hours or hours) if tod else None
        self.want_inside = tod is not None and tod.when == "inside_working_hours"
        # the profile name in scope covers its whole database, whatever tenant id its events carry
        self.tenants = frozenset() if profile in rule.tenants else frozenset(rule.tenants)
        self.include_test = rule.include_test_events
        threshold = rule.threshold
        self.window_ms = int(threshold.window_seconds * 1000) if threshold else 0
        self._count = threshold.count if threshold else 0
        self._per_type = bool(threshold and threshold.per_type)
        self.windows: dict[str, BurstWindow] = {}
        self.coalesce_ms = int(rule.coalesce_minutes * 60_000)

    def window_for(self, event_type: str) -> BurstWindow | None:
        """The threshold window an event of `event_type` counts in (one per type with `per_type`)."""
        if not self.window_ms:
            return None
        key = event_type if self._per_type else ""
        window = self.windows.get(key)
        if window is None:
            window = self.windows[key] = BurstWindow(self._count, self.window_ms)
        return window

    def accepts(self, row: EvalRow, cache: list[Mapping[str, Any]]) -> bool:
        """Every condition but the threshold; the payload is parsed (once per row, into `cache`) only when a
        condition needs it."""
        if row.purpose == "test" and not self.include_test:
            return False
        if self.tenants and row.tenant not in self.tenants:
            return False
        if self.hours is not None and self.hours.inside(row.time_ms) is not self.want_inside:
            return False
        if self.tests:
            if not cache:
                cache.append(event_data(row))
            payload = cache[0]
            return all(test(payload) for test in self.tests)
        return True


class RuleEngine:
    """The enabled rules of one tenant database and their open alerts."""

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        hours: WorkingHours,
        profile: str = "",
        catch_up_after_s: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.rules = tuple(r for r in rules if r.enabled)
        self.hours, self.profile = hours, profile
        self.catch_up_after_s = catch_up_after_s
        self.clock = clock
        self.compiled: list[CompiledRule] = []
        self.by_type: dict[str, list[CompiledRule]] = {}
        self.open: dict[str, OpenAlert] = {}
        self.reset()
        needed = frozenset(self.by_type)
        self.types: frozenset[str] | None = None if needed == EVENT_TYPE_NAMES else needed
        self.raw_types = frozenset(t for c in self.compiled if c.tests for t in c.types)
        self.threshold_types = frozenset(t for c in self.compiled if c.window_ms for t in c.types)
        self.longest_window_ms = max((c.window_ms for c in self.compiled), default=0)

    def reset(self) -> None:
        """Forget window state and open alerts (before restoring them from the store)."""
        self.compiled = [CompiledRule(r, self.hours, self.profile) for r in self.rules]
        self.by_type = {}
        for compiled in self.compiled:
            for name in compiled.types:
                self.by_type.setdefault(name, []).append(compiled)
        self.open = {}

    def restore(self, latest: Iterable[StoredAlert], recent: Iterable[RowSegment]) -> None:
        """State after a restart: each rule's newest alert is its open one again, and the threshold windows are
        refilled from the events evaluated before (`recent`: the last two windows' worth), firing nothing."""
        for alert in latest:
            if any(c.id == alert.rule_id for c in self.compiled):
                self.open[alert.rule_id] = OpenAlert.from_stored(alert)
        newest = None
        for row in eval_rows(recent):
            newest = row.time_ms if newest is None else max(newest, row.time_ms)
            cache: list[Mapping[str, Any]] = []
            for rule in self.by_type.get(row.type, ()):
                window = rule.window_for(row.type)
                if window is not None and rule.accepts(row, cache):
                    window.replay(row)
        for rule in self.compiled:
            opened = self.open.get(rule.id)
            if not rule.window_ms or opened is None or newest is None:
                continue
            if newest - opened.last_time_ms <= rule.window_ms:  # its burst may still be going on
                for event_type in opened.write.type_counts:
                    window = rule.window_for(event_type)
                    if window is not None:
                        window.burst_last_ms = max(window.burst_last_ms or 0, opened.last_time_ms)

    def feed(self, segments: Iterable[RowSegment]) -> list[OpenAlert]:
        """Apply the rules to rows in stored order; the alerts started or changed, in the order first touched.

        The hot loop of evaluation (every stored event passes here during a catch-up): rows are read by index in
        EventRow's column order, a record (EvalRow) is made only for a row a rule accepts, and the checks of
        `CompiledRule.accepts` and the common fold are written out (bench/ingest.py, consumer "rules")."""
        now = self.clock()
        catch_up_before_ms = int((now - self.catch_up_after_s) * 1000)
        catch_up_s = self.catch_up_after_s
        touched: list[OpenAlert] = []
        by_type = self.by_type
        opened_by_rule = self.open
        quiet = Outcome.QUIET
        new = tuple.__new__
        for first, rows in segments:
            pairs = enumerate(rows, first) if first is not None else ((r[11], r) for r in rows)
            for seq, e in pairs:
                # EventRow order: event_id, offset, type, family, time, time_ms, source, tenant, purpose, summary, raw
                rules = by_type.get(e[2])
                if rules is None:
                    continue
                time_ms = e[5]
                is_test = e[8] == "test"
                row: EvalRow | None = None
                payload: Mapping[str, Any] | None = None
                for rule in rules:
                    if is_test and not rule.include_test:
                        continue
                    if rule.tenants and e[7] not in rule.tenants:
                        continue
                    hours = rule.hours
                    if hours is not None:
                        inside = hours.cache.get(time_ms // 60_000)
                        if inside is None:
                            inside = hours.inside(time_ms)
                        if inside is not rule.want_inside:
                            continue
                    if row is None:
                        row = new(EvalRow, (seq, e[0], e[2], e[4], time_ms, e[7], e[8], e[10]))
                    if rule.tests:
                        if payload is None:
                            payload = event_data(row)
                        if not all(test(payload) for test in rule.tests):
                            continue
                    catch_up = time_ms < catch_up_before_ms
                    if rule.window_ms:
                        window = rule.window_for(e[2])
                        assert window is not None
                        outcome, events = window.offer(row)
                        if outcome is quiet:
                            continue
                        alert = self._record(rule, outcome, events, catch_up, now)
                    else:
                        opened = opened_by_rule.get(rule.id)  # no threshold: fold into its open alert?
                        if (
                            opened is not None
                            and opened.write.catch_up is catch_up
                            and (
                                now - opened.write.updated_at <= catch_up_s
                                if catch_up
                                else time_ms - opened.write.last_time_ms < rule.coalesce_ms
                            )
                        ):
                            opened.add_one(row, now)
                            alert = opened
                        else:
                            alert = opened_by_rule[rule.id] = OpenAlert.start(rule.rule, [row], catch_up, now)
                    if not alert.touched:
                        alert.touched = True
                        touched.append(alert)
        for alert in touched:
            alert.touched = False
        return touched

    def _record(
        self, rule: CompiledRule, outcome: Outcome, events: list[EvalRow], catch_up: bool, now: float
    ) -> OpenAlert:
        opened = self.open.get(rule.id)
        if opened is not None:
            if outcome is Outcome.CONTINUE:
                opened.add(events, now, new_firing=False)
                return opened
            if opened.catch_up == catch_up and (
                now - opened.updated_at <= self.catch_up_after_s
                if catch_up
                else events[-1].time_ms - opened.last_time_ms < rule.coalesce_ms
            ):
                opened.add(events, now, new_firing=True)
                return opened
        alert = OpenAlert.start(rule.rule, events, catch_up, now)
        self.open[rule.id] = alert
        return alert
