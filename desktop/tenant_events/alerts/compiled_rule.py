"""One rule ready to test rows: its conditions compiled, and its state per group (threshold windows, sequences,
novelty sightings). No I/O; rule_engine.RuleEngine drives it.

    row ─▶ accepts (scope, time of day, conditions) ─▶ group key (group_by) ─▶ novelty ─▶ window | sequence
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.matchers import (
    DataTest,
    WorkingHoursClock,
    any_of_test,
    change_precheck,
    compile_condition,
    raw_precheck,
    raw_precheck_any,
)
from tenant_events.alerts.rule_model import Rule
from tenant_events.alerts.rule_parts import StateCheck
from tenant_events.alerts.sequences import SequenceWindow
from tenant_events.alerts.thresholds import BurstWindow, Outcome
from tenant_events.store.alert_records import EvalRow

LEARN_MS: Final = 3_600_000  # novelty says "new" only after an hour of history (or its period, if shorter)
GROUP_MARK: Final = " · "  # an alert of a grouped rule is called "<rule name> · <group>"
SWEEP_EVERY: Final = 4096  # offers between sweeps of groups gone quiet (memory stays bounded per rule)
_NOUNS: Final = {"ip": "IP", "user_id": "user", "phone_number": "phone number", "id": ""}
StateTest = Callable[[StateCheck, EvalRow, Mapping[str, Any]], bool]  # (check, row, data) → holds now
NameOf = Callable[[str, str], str | None]  # (kind, id) → what the directory calls it, None when unknown
NAMED_KINDS: Final = frozenset({"user", "group", "organization", "role", "connection"})


def _at(data: Mapping[str, Any], path: list[str]) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _label(path: list[str], value: Any, data: Mapping[str, Any], names: NameOf | None) -> str:
    """'client Backoffice Script' for context.client.id: the name the directory knows for it ('user
    grace@example.com' for object.user.user_id, an organization's display name), else its sibling name in the
    event, else the id."""
    noun = _NOUNS.get(path[-1], path[-1].replace("_", " "))
    if path[-1] in ("id", "user_id") and len(path) > 1:
        noun = path[-2]
        name = names(noun, str(value)) if names is not None and noun in NAMED_KINDS else None
        if not name:
            name = _at(data, [*path[:-1], "name"]) or _at(data, [*path[:-1], "email"])
        if isinstance(name, str) and name:
            return f"{noun} {name}"
    return f"{noun} {value}".strip()


class GroupKey:
    """The group an event belongs to: one value per `group_by` entry (the first of its fallbacks present)."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = [[p.split(".") for p in key.split("|")] for key in keys]
        # one key (most rules): its fallbacks walked without building parts
        self._one = [(i, tuple(path)) for i, path in enumerate(self.keys[0])] if len(keys) == 1 else None

    def of(self, data: Mapping[str, Any]) -> str | None:
        """The event's key, or None when it carries none of a key's fields (the hot path: no label made)."""
        if self._one is not None:
            for i, steps in self._one:
                value: Any = data
                for step in steps:
                    value = value.get(step) if type(value) is dict else None
                if value is not None and value != "" and type(value) is not dict and type(value) is not list:
                    return f"{i}:{value}" if i else str(value)
            return None
        parts: list[str] = []
        for fallbacks in self.keys:
            for i, path in enumerate(fallbacks):
                value = data
                for step in path:
                    value = value.get(step) if type(value) is dict else None
                if value is not None and value != "" and type(value) is not dict and type(value) is not list:
                    parts.append(f"{i}:{value}" if i else str(value))
                    break
            else:
                return None
        return parts[0] if len(parts) == 1 else "\x1f".join(parts)

    def label(self, data: Mapping[str, Any], names: NameOf | None = None) -> str:
        """How the alert names the group: 'client Backoffice Script, IP 198.51.100.23'."""
        labels: list[str] = []
        for fallbacks in self.keys:
            for path in fallbacks:
                value = _at(data, path)
                if value is not None and not isinstance(value, dict | list) and value != "":
                    labels.append(_label(path, value, data, names))
                    break
        return ", ".join(labels)


class CompiledRule:
    """A rule ready to test rows, with its state."""

    def __init__(
        self, rule: Rule, hours: WorkingHours, profile: str, lists: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        self.rule = rule
        self.id = rule.id
        self.types = rule.event_types
        changes = [c for c in rule.conditions if c.op in ("changed", "grew")]
        self.tests: list[DataTest] = [
            compile_condition(c, lists) for c in rule.conditions if c not in changes
        ]
        if rule.any_of:  # alternatives last: the conditions every event must meet rule most events out first
            self.tests.append(any_of_test(rule.any_of, lists))
        # exceptions (Sigma filters): an event every test of one of them passes never fires the rule
        self.excepts: list[list[DataTest]] = [
            [compile_condition(c, lists) for c in exception.conditions] for exception in rule.except_
        ]
        # an update's changes: cheap checks on the update first, the earlier state looked up only then
        self.prechecks: list[DataTest] = [change_precheck(c) for c in changes]
        self.change_tests: list[DataTest] = [compile_condition(c, lists) for c in changes]
        self.needs_before = bool(changes)
        tod = rule.time_of_day
        self.hours = WorkingHoursClock(tod.hours or hours) if tod else None
        self.want_inside = tod is not None and tod.when == "inside_working_hours"
        # the profile name in scope covers its whole database, whatever tenant id its events carry
        self.tenants = frozenset() if profile in rule.tenants else frozenset(rule.tenants)
        self.include_test = rule.include_test_events
        threshold, sequence = rule.threshold, rule.sequence
        self.window_ms = int(rule.window_seconds * 1000)
        self.group = GroupKey(rule.group_by) if rule.group_by else None
        self.distinct = GroupKey([threshold.distinct]) if threshold and threshold.distinct else None
        self._count = threshold.count if threshold else 0
        self._per_type = bool(threshold and threshold.per_type)
        self.steps: list[tuple[frozenset[str], list[DataTest]]] = (
            [(s.event_types, [compile_condition(c, lists) for c in s.conditions]) for s in sequence.steps]
            if sequence
            else []
        )
        self.ordered = bool(sequence and sequence.ordered)
        # the steps an event of each type may match, in step order, with their tests
        self._steps_of: dict[str, list[tuple[int, list[DataTest]]]] = {}
        for i, (step_types, step_tests) in enumerate(self.steps):
            for name in step_types:
                self._steps_of.setdefault(name, []).append((i, step_tests))
        self.novelty = rule.novelty
        self.novel_key = GroupKey(rule.novelty.keys) if rule.novelty else None
        self.novel_ms = int(rule.novelty.days * 86_400_000) if rule.novelty else 0
        self.seen: dict[tuple[str, str], int] = {}  # (key, type or "") → newest sighting (event time)
        self.seen_since: int | None = None  # the first event time novelty has seen (its history's start)
        self.state_checks = list(rule.state)
        # the payload is needed beyond the conditions: per-group state, sequences' steps, novelty, state
        self.complex = bool(self.group or self.distinct or self.steps or self.novelty or self.state_checks)
        self.needs_payload = bool(self.tests or self.complex or self.needs_before or self.excepts)
        # an event whose raw JSON names none of the first group key's fields cannot count: skipped unparsed
        self.needles: tuple[str, ...] = (
            tuple(f'"{path[-1]}"' for path in self.group.keys[0]) if self.group is not None else ()
        )
        # alternatives (`any_of`) are prechecked as one: no alternative is required on its own
        self.raw_checks = [
            c
            for c in (
                *(raw_precheck(cond, lists) for cond in rule.conditions),
                raw_precheck_any(rule.any_of, lists),
            )
            if c is not None
        ]
        self.windows: dict[str, BurstWindow] = {}
        self.sequences: dict[str, SequenceWindow] = {}
        self.labels: dict[str, str] = {}  # group key → label of the alert that names it
        self.names: NameOf | None = None  # the directory's names for ids in labels (set by the engine)
        self.coalesce_ms = int(rule.coalesce_minutes * 60_000)
        self.resolve_after_ms = int(rule.resolve_after_s * 1000)
        self._offers = 0

    def excepted(self, data: Mapping[str, Any]) -> bool:
        """Whether one of the rule's exceptions holds for the event."""
        return any(all(test(data) for test in tests) for tests in self.excepts)

    def window_for(self, event_type: str, group: str = "") -> BurstWindow | None:
        """The threshold window an event of `event_type` counts in (one per type with `per_type`, per group)."""
        if not self._count:
            return None
        key = f"{event_type}\x1e{group}" if self._per_type else group
        window = self.windows.get(key)
        if window is None:
            window = self.windows[key] = BurstWindow(
                self._count, self.window_ms, distinct=bool(self.distinct)
            )
        return window

    def evaluate(
        self,
        row: EvalRow,
        data: Mapping[str, Any],
        state: StateTest | None,
        *,
        replay: bool = False,
        spent: bool = False,
    ) -> tuple[Outcome, list[EvalRow], str]:
        """What a row (already accepted by scope and conditions) does to the rule: QUIET, FIRE with the events
        behind the firing, CONTINUE with [row]; and its group's key ('' without group_by; `labels` names it).
        With `replay` (a restart rebuilding state) nothing fires; `spent`: the store links the row to an alert."""
        group, label = "", ""
        if self.group is not None:
            found = self.group.of(data)
            if found is None:
                return Outcome.QUIET, [], ""
            group = found
            if replay and group not in self.labels:  # a restart finds each group's alert again by its name
                self.labels[group] = self.group.label(data, self.names)
        label = group
        if self.state_checks and not replay:
            if state is None:
                return Outcome.QUIET, [], label
            for check in self.state_checks:
                if state(check, row, data) is check.negate:
                    return Outcome.QUIET, [], label
        if self.novel_key is not None and not self._novel(row, data):
            return Outcome.QUIET, [], label
        self._offers += 1
        if self._offers % SWEEP_EVERY == 0:
            self._sweep(row.time_ms)
        if self.steps:
            matched = []
            for i, tests in self._steps_of.get(row.type, ()):
                for test in tests:
                    if not test(data):
                        break
                else:
                    matched.append(i)
            if not matched:
                return Outcome.QUIET, [], label
            steps = frozenset(matched)
            seq = self.sequences.get(group)
            if seq is None:
                seq = self.sequences[group] = SequenceWindow(
                    len(self.steps), self.window_ms, ordered=self.ordered
                )
            if replay:
                seq.replay(row, steps, spent=spent)
                return Outcome.QUIET, [], label
            events = seq.offer(row, steps)
            if not events:
                return Outcome.QUIET, [], label
            if self.group is not None and group not in self.labels:
                self.labels[group] = self.group.label(data, self.names)
            return Outcome.FIRE, events, label
        window = self.window_for(row.type, group)
        if window is None:
            if self.group is not None and group not in self.labels:
                self.labels[group] = self.group.label(data, self.names)
            return Outcome.FIRE, [row], label
        value = None
        if self.distinct is not None:
            found = self.distinct.of(data)
            if found is None:
                return Outcome.QUIET, [], label
            value = found
        if replay:
            window.replay(row, value, spent=spent)
            return Outcome.QUIET, [], label
        outcome, events = window.offer(row, value)
        if outcome is Outcome.FIRE and self.group is not None and group not in self.labels:
            self.labels[group] = self.group.label(data, self.names)
        return outcome, events, label

    def _novel(self, row: EvalRow, data: Mapping[str, Any]) -> bool:
        """Whether the key did none of the rule's types within the novelty period before this event; records
        the sighting either way."""
        assert self.novel_key is not None and self.novelty is not None
        found = self.novel_key.of(data)
        if found is None:
            return False
        key = (found, row.type if self.novelty.per_type else "")
        last = self.seen.get(key)
        self.seen[key] = row.time_ms if last is None else max(last, row.time_ms)
        since = self.seen_since = (
            row.time_ms if self.seen_since is None else min(self.seen_since, row.time_ms)
        )
        if row.time_ms - since < min(self.novel_ms, LEARN_MS):
            return False  # too little history yet to call anything new
        return last is None or abs(row.time_ms - last) >= self.novel_ms

    def _sweep(self, now_ms: int) -> None:
        """Drop the state of groups with nothing within two windows of `now_ms`."""
        horizon = now_ms - 2 * self.window_ms
        for table in (self.windows, self.sequences):
            for key in [
                k for k, w in table.items() if w.newest_ms < horizon and not getattr(w, "in_burst", False)
            ]:
                del table[key]
        if self.novel_ms:
            old = now_ms - self.novel_ms
            for seen in [k for k, t in self.seen.items() if t < old]:
                del self.seen[seen]
