"""Rules applied to stored events, in memory: which rows fire which rule, and which alert each firing joins.

No I/O: evaluator.py feeds it rows read from the store and writes what it returns; history.py feeds it past
rows to try a rule. Per rule (and per group, with `group_by`), one alert is "open":

  * an alert holds the events that made it fire, firing by firing: a threshold's window that crossed (and the
    burst that went on at its rate, thresholds.py), a sequence's events, a single event — never the routine
    traffic after;
  * whether a firing folds into the open alert as a new version or starts a new alert is
    values/alert_lifecycle.py's `folds`: live, within `coalesce_minutes` of the firing that raised it and while
    it is not resolved (a burst of grants is one alert "× 5", a second mass deletion four minutes later is its
    version 2); caught up, while the same catch-up goes on — a backlog becomes ONE summary per rule and group.

An event is a catch-up event when it is older than `catch_up_after_s` as it is evaluated (a backlog after
sleep, a restart, a replay from a timestamp). With `by_received` its age is taken when it was received instead,
and that time also stands for "now" when catch-up firings fold: a team relay's events are received when the hub
stored them, so whichever relay evaluates them, and however late, groups them alike under the same alert names.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import access_state
from tenant_events.alerts.access_state import AccessState
from tenant_events.alerts.compiled_rule import GROUP_MARK, CompiledRule, NameOf
from tenant_events.alerts.object_states import ObjectStates
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.payload import NO_DATA as _NO_DATA
from tenant_events.alerts.payload import raw_data
from tenant_events.alerts.rule_model import Rule
from tenant_events.alerts.thresholds import Outcome
from tenant_events.store.alert_records import EvalRow, RowSegment
from tenant_events.values.alert_lifecycle import folds
from tenant_events.values.alerts import StoredAlert
from tenant_events.wire.event_types import EVENT_TYPE_NAMES


def eval_rows(segments: Iterable[RowSegment]) -> Iterator[EvalRow]:
    """The rows of segments as records (for the rare paths: restoring windows, tests)."""
    new = tuple.__new__
    for first, rows in segments:
        for seq, e in enumerate(rows, first) if first is not None else ((r[11], r) for r in rows):
            yield new(EvalRow, (seq, e[0], e[2], e[4], e[5], e[7], e[8], e[10]))


def event_data(row: EvalRow) -> Mapping[str, Any]:
    """The event's `data` object from the row's raw JSON (empty when absent or unreadable)."""
    return raw_data(row.raw)


def _accepts(rule: CompiledRule, row: EvalRow, data: Mapping[str, Any]) -> bool:
    """Scope, time of day and conditions (what `feed` writes out inline), for restoring state."""
    if row.purpose == "test" and not rule.include_test:
        return False
    if rule.tenants and row.tenant not in rule.tenants:
        return False
    if rule.hours is not None and rule.hours.inside(row.time_ms) is not rule.want_inside:
        return False
    return all(test(data) for test in rule.tests) and not (rule.excepts and rule.excepted(data))


class RuleEngine:
    """The enabled rules of one tenant database and their open alerts.

    `access`: answers the rules' state checks, kept from the events fed (None when no rule has one);
    `earlier`: the object's state before an update, for `changed` conditions on events without
    `previous_object` that the engine has not seen the object of since it started."""

    def __init__(
        self,
        rules: Sequence[Rule],
        *,
        hours: WorkingHours,
        profile: str = "",
        catch_up_after_s: float = 300.0,
        clock: Callable[[], float] = time.time,
        by_received: bool = False,
        lists: Mapping[str, frozenset[str]] | None = None,
        earlier: Callable[[EvalRow, Mapping[str, Any]], dict[str, Any] | None] | None = None,
    ) -> None:
        self.rules = tuple(r for r in rules if r.enabled)
        self.hours, self.profile, self.lists = hours, profile, lists
        self.catch_up_after_s = catch_up_after_s
        self.clock = clock
        self.by_received = by_received
        self.earlier = earlier
        self.access: AccessState | None = None
        self.names: NameOf | None = None  # the directory's names, for the labels of grouped alerts
        self.catching_up = (
            False  # the row being fed is a catch-up's (feed sets it before a grouped rule's test)
        )
        self.compiled: list[CompiledRule] = []
        self.by_type: dict[str, list[CompiledRule]] = {}
        self.open: dict[str, OpenAlert] = {}
        self.objects = ObjectStates()
        self._before: tuple[EvalRow | None, Mapping[str, Any]] = (
            None,
            _NO_DATA,
        )  # the last update's with_before
        # (rule id, seq) of events after the watermark that an alert adopted from a team's relay already holds
        self.spent_after: set[tuple[str, int]] = set()
        self.reset()
        access = self.access_types
        needed = frozenset(self.by_type) | access
        self.types: frozenset[str] | None = None if needed == EVENT_TYPE_NAMES else needed
        self.raw_types = frozenset(t for c in self.compiled if c.needs_payload for t in c.types) | access
        self.longest_window_ms = max((c.window_ms for c in self.compiled), default=0)
        # how far back (event time) restoring state reads each type: two windows, or a novelty period, of the
        # rules that read it (a burst's type minutes, a novelty's days)
        self.history_ms: dict[str, int] = {}
        for c in self.compiled:
            for t in c.types if c.window_ms or c.novel_ms else ():
                self.history_ms[t] = max(self.history_ms.get(t, 0), 2 * c.window_ms, c.novel_ms)

    def reset(self) -> None:
        """Forget window state and open alerts (before restoring them from the store)."""
        self.compiled = [CompiledRule(r, self.hours, self.profile, self.lists) for r in self.rules]
        for compiled in self.compiled:
            compiled.names = self._name_of
        self.by_type = {}
        for compiled in self.compiled:
            for name in compiled.types:
                self.by_type.setdefault(name, []).append(compiled)
        self.open = {}
        self.objects = ObjectStates()
        self._before = (None, _NO_DATA)
        self.access = AccessState() if any(c.state_checks for c in self.compiled) else None
        # what the state takes in: the events its rules' checks depend on
        self.access_types = access_state.types_for(s.check for c in self.compiled for s in c.state_checks)

    def _name_of(self, kind: str, ident: str) -> str | None:
        """The directory's name for a live group's label; a catch-up's groups (hundreds in a backlog) take the
        name the event itself gives: the directory lags behind a backlog anyway (compiled_rule.py `_label`)."""
        return self.names(kind, ident) if self.names is not None and not self.catching_up else None

    def restore(self, recent: Iterable[RowSegment], spent: Collection[tuple[str, int]]) -> None:
        """State after a restart, a span at a time: the threshold windows, sequences and novelty sightings are
        refilled from the events evaluated before (`recent`: `history_ms` of each type), firing nothing, each
        event marked with whether an alert of the rule already has it (`spent`: (rule id, seq))."""
        for row in eval_rows(recent):
            data: Mapping[str, Any] | None = None
            for rule in self.by_type.get(row.type, ()):
                if not (rule.window_ms or rule.novel_ms):
                    continue
                if data is None:
                    data = event_data(row)
                if not _accepts(rule, row, data):
                    continue
                used = (rule.id, row.seq) in spent
                if rule.complex:
                    rule.evaluate(row, data, None, replay=True, spent=used)
                else:
                    window = rule.window_for(row.type)
                    if window is not None:
                        window.replay(row, spent=used)

    def reopen(self, latest: Iterable[StoredAlert]) -> None:
        """After `restore`: each rule's (each group's) newest alert is its open one again."""
        by_id = {c.id: c for c in self.compiled}
        for alert in sorted(latest, key=lambda a: a.id):
            found = by_id.get(alert.rule_id)
            if found is None:
                continue
            rule = found
            key = rule.id
            if alert.group_key:
                key = f"{rule.id}\x1f{alert.group_key}"
            elif rule.group is not None and GROUP_MARK in alert.rule_name:  # stored before its key was kept
                label = alert.rule_name.partition(GROUP_MARK)[2]
                group = next((g for g, text in rule.labels.items() if text == label), None)
                if group is None:
                    continue  # its group has had nothing within the restored history: no firing can join it
                key = f"{rule.id}\x1f{group}"
            self.open[key] = OpenAlert.from_stored(alert, self.clock())

    def feed(self, segments: Iterable[RowSegment]) -> list[OpenAlert]:
        """Apply the rules to rows in stored order; the alerts started or changed, in the order first touched.

        The hot loop of evaluation (every stored event passes here during a catch-up): rows are read by index in
        EventRow's column order, a record (EvalRow) is made only for a row a rule accepts, and the checks of
        `_accepts` and the common fold are written out (bench/ingest.py, consumer "rules")."""
        now = self.clock()
        catch_up_before_ms = int((now - self.catch_up_after_s) * 1000)
        catch_up_s = self.catch_up_after_s
        touched: list[OpenAlert] = []
        by_type = self.by_type
        opened_by_rule = self.open
        quiet = Outcome.QUIET
        by_received = self.by_received
        new = tuple.__new__
        access = self.access
        access_types = self.access_types
        spent_after = self.spent_after
        seq_of = itemgetter(11)
        for first, rows in segments:
            # (seq, row) pairs made in C: no Python frame per row
            pairs = enumerate(rows, first) if first is not None else zip(map(seq_of, rows), rows, strict=True)
            for seq, e in pairs:
                # EventRow order: event_id, offset, type, family, time, time_ms, source, tenant, purpose, summary, raw
                payload: Mapping[str, Any] | None = None
                if e[2] in access_types:
                    assert access is not None
                    payload = raw_data(e[10])
                    access.apply(e[2], e[5], seq, payload)
                rules = by_type.get(e[2])
                if rules is None:
                    continue
                time_ms = e[5]
                is_test = e[8] == "test"
                row: EvalRow | None = None
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
                    if rule.needs_payload:
                        raw = e[10]
                        if raw is not None:
                            needles = rule.needles
                            if needles:
                                for needle in needles:
                                    if needle in raw:
                                        break
                                else:
                                    continue
                            if rule.raw_checks and not all(check(raw) for check in rule.raw_checks):
                                continue
                        if payload is None:
                            payload = raw_data(raw)
                        passed = True
                        for test in rule.tests:
                            if not test(payload):
                                passed = False
                                break
                        if not passed or (rule.needs_before and not self._changed(rule, row, payload)):
                            continue
                        if rule.excepts and rule.excepted(payload):
                            continue
                    if by_received:  # in memory an EventRow (received_at at 11), from the table seq at 11
                        now = e[11] if first is not None else e[12]
                        catch_up_before_ms = int((now - catch_up_s) * 1000)
                    catch_up = time_ms < catch_up_before_ms
                    if spent_after and (rule.id, seq) in spent_after:
                        self._spent(rule, row, payload)
                        continue
                    if rule.complex:
                        assert payload is not None
                        self.catching_up = catch_up
                        outcome, events, group = rule.evaluate(row, payload, access)
                        if outcome is quiet:
                            continue
                        alert = self._record(rule, outcome, events, catch_up, now, group)
                    elif rule.window_ms:
                        window = rule.window_for(e[2])
                        assert window is not None
                        outcome, events = window.offer(row)
                        if outcome is quiet:
                            continue
                        alert = self._record(rule, outcome, events, catch_up, now, "")
                    else:
                        opened = opened_by_rule.get(rule.id)  # a single event: fold into its open alert?
                        if opened is not None and (
                            # (`folds`, a catch-up's written out: most of a backlog folds this way)
                            (
                                not opened.resolved
                                and opened.write.catch_up is True
                                and now - opened.write.updated_at <= catch_up_s
                            )
                            if catch_up
                            else folds(
                                opened,
                                time_ms,
                                catch_up=False,
                                now=now,
                                coalesce_ms=rule.coalesce_ms,
                                resolve_after_ms=rule.resolve_after_ms,
                                catch_up_s=catch_up_s,
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

    @staticmethod
    def _spent(rule: CompiledRule, row: EvalRow, data: Mapping[str, Any] | None) -> None:
        """An event an adopted alert holds: in the rule's window or sequence as used up, never a firing again."""
        if rule.complex:
            assert data is not None
            rule.evaluate(row, data, None, replay=True, spent=True)
        elif rule.window_ms:
            window = rule.window_for(row.type)
            if window is not None:
                window.replay(row, spent=True)

    def _changed(self, rule: CompiledRule, row: EvalRow, data: Mapping[str, Any]) -> bool:
        """The rule's `changed` / `grew` conditions: the update against the object's earlier state (the update
        diff of view/update_diff.py), looked up only once the update itself could match."""
        if not all(check(data) for check in rule.prechecks):
            return False
        if self._before[0] is not row:  # once per event: a second rule asking would find the update itself
            self._before = (row, self.objects.with_before(row, data, self.earlier))
        return all(test(self._before[1]) for test in rule.change_tests)

    def _record(
        self,
        rule: CompiledRule,
        outcome: Outcome,
        events: list[EvalRow],
        catch_up: bool,
        now: float,
        group: str,
    ) -> OpenAlert:
        key = f"{rule.id}\x1f{group}" if group else rule.id
        opened = self.open.get(key)
        if opened is not None:
            if outcome is Outcome.CONTINUE:
                opened.grow(events, now)
                return opened
            if folds(
                opened,
                max(e.time_ms for e in events),
                catch_up=catch_up,
                now=now,
                coalesce_ms=rule.coalesce_ms,
                resolve_after_ms=rule.resolve_after_ms,
                catch_up_s=self.catch_up_after_s,
            ):
                opened.fire(events, now)
                return opened
        name = f"{rule.rule.name}{GROUP_MARK}{rule.labels.get(group, group)}" if group else rule.rule.name
        alert = OpenAlert.start(rule.rule, events, catch_up, now, name=name, group=group)
        self.open[key] = alert
        return alert
