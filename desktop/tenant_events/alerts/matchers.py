"""The tests a rule applies to one event: type patterns, field conditions on `data`, working hours.

Compiled once per rule set into plain closures, so evaluating a row is a few dict lookups. Field names follow
the real service's payloads (docs/event-stream.md "Payloads", wire/payloads.py): `object.role.name`,
`object.organization.id`, `object.user.user_id`, `object.connection.id`, `context.client.id`.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import zoneinfo
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from datetime import time as wall_time
from typing import TYPE_CHECKING, Any, Final

from tenant_events.alert_settings import WEEKDAYS, WorkingHours
from tenant_events.alerts.rule_parts import re2_compile
from tenant_events.alerts.type_patterns import expand_types as expand_types  # a rule's type test

if TYPE_CHECKING:
    from tenant_events.alerts.rule_model import Condition

DataTest = Callable[[Mapping[str, Any]], bool]
_MINUTE_MS: Final = 60_000
_NOT_SCALAR: Final = (dict, list)  # (a tuple: `dict | list` would make a union object at every test)


def _at_path(data: Mapping[str, Any], path: list[str]) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, dict):  # parsed JSON: dict, not the (much slower to test) Mapping ABC
            return None
        value = value.get(key)
    return value


def _scalars(value: Any) -> Iterator[str]:
    """Every scalar under `value` as text (ids, names), walking objects and lists."""
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


@functools.cache
def disposable_domains() -> frozenset[str]:
    """The maintained list of throwaway e-mail domains (the `disposable-email-domains` package)."""
    from disposable_email_domains import blocklist

    return frozenset(str(d).casefold() for d in blocklist)


def named_list(name: str, lists: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The values of a list a condition names (the built-in one or the settings' `alerts.lists`)."""
    if name == "disposable-email-domains":
        return disposable_domains()
    return lists.get(name, frozenset())


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, _NOT_SCALAR):
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def _change_test(cond: Condition, path: list[str]) -> DataTest:
    """`changed` / `grew` on `object.<…>`: the object now against `previous_object` (the update's diff source,
    view/update_diff.py; the engine fills it in from the object's earlier event when the event lacks it)."""
    rest = path[1:] if path[0] in ("object", "previous_object") else path
    after_path, before_path = ["object", *rest], ["previous_object", *rest]
    fold: Callable[[str], str] = str.casefold if cond.ignore_case else str
    want_from = None if cond.changed_from is None else fold(cond.changed_from)
    want_to = None if cond.changed_to is None else fold(cond.changed_to)

    def test(data: Mapping[str, Any]) -> bool:
        if not isinstance(data.get("previous_object"), dict):
            return False  # no earlier state known: nothing can be said to have changed
        before, after = _at_path(data, before_path), _at_path(data, after_path)
        if cond.op == "grew":
            return isinstance(after, list) and len(after) > (len(before) if isinstance(before, list) else 0)
        if before == after:
            return False
        old, new = _text(before), _text(after)
        if want_from is not None and (old is None or fold(old) != want_from):
            return False
        return want_to is None or (new is not None and fold(new) == want_to)

    return test


_DOMAIN_IN_RAW: Final = re.compile(r'@([A-Za-z0-9.-]+)"')


def raw_precheck(
    cond: Condition, lists: Mapping[str, frozenset[str]] | None = None
) -> Callable[[str], bool] | None:
    """A test of the raw JSON that a condition cannot pass without (None: none cheaper than parsing): an address
    at a listed domain shows in the raw text as `@domain"`, so an event with none is skipped unparsed. A negated
    condition has none: exactly the events without a listed domain pass it."""
    if cond.op != "domain_in_list" or cond.negate:
        return None
    wanted = [cond.value] if isinstance(cond.value, str) else list(cond.value or [])
    members = frozenset(m.casefold() for v in wanted for m in named_list(v, lists or {}))
    find = _DOMAIN_IN_RAW.findall
    return lambda raw: any(d.casefold() in members for d in find(raw))


def raw_precheck_any(
    conds: list[Condition], lists: Mapping[str, frozenset[str]] | None = None
) -> Callable[[str], bool] | None:
    """The raw-text test of alternatives (`any_of`): only when every one has its own, and then any one of them
    passing is enough; an alternative without one (an unverified address) can hold in any event."""
    checks = [raw_precheck(cond, lists) for cond in conds]
    found = [c for c in checks if c is not None]
    if not conds or len(found) != len(checks):
        return None
    return found[0] if len(found) == 1 else lambda raw: any(check(raw) for check in found)


def any_of_test(conds: list[Condition], lists: Mapping[str, frozenset[str]] | None = None) -> DataTest:
    """A test that at least one of `conds` holds."""
    tests = [compile_condition(cond, lists) for cond in conds]

    def any_of(data: Mapping[str, Any]) -> bool:
        for test in tests:  # noqa: SIM110 - a loop: any() makes a generator per event
            if test(data):
                return True
        return False

    return any_of


def change_precheck(cond: Condition) -> DataTest:
    """What a `changed` / `grew` condition needs of the update alone, tested before the earlier state is looked
    up: a list that grew has two entries or more now (a first entry is the object's own, not a gain); a field
    changed to a value has that value now."""
    path = cond.field.split(".")
    after_path = ["object", *(path[1:] if path[0] in ("object", "previous_object") else path)]
    if cond.op == "grew":
        return lambda data: isinstance(after := _at_path(data, after_path), list) and len(after) >= 2
    if cond.changed_to is not None:
        fold: Callable[[str], str] = str.casefold if cond.ignore_case else str
        want = fold(cond.changed_to)
        return lambda data: (text := _text(_at_path(data, after_path))) is not None and fold(text) == want
    return lambda data: True


def compile_condition(cond: Condition, lists: Mapping[str, frozenset[str]] | None = None) -> DataTest:
    """A test of one event's `data` for `cond`."""
    if cond.negate:
        held = compile_condition(cond.model_copy(update={"negate": False}), lists)
        return lambda data: not held(data)
    path = cond.field.split(".")
    if cond.op == "cidr":
        return _in_networks(path, [cond.value] if isinstance(cond.value, str) else list(cond.value or []))
    fold: Callable[[str], str] = str.casefold if cond.ignore_case else str
    wanted = [cond.value] if isinstance(cond.value, str) else list(cond.value or [])
    values = tuple(fold(v) for v in wanted)
    if cond.op == "exists":
        return lambda data: _at_path(data, path) is not None
    if cond.op == "missing":
        return lambda data: _at_path(data, path) is None
    if cond.op == "mentions":
        return lambda data: any(fold(s) in values for s in _scalars(_at_path(data, path)))
    if cond.op in ("changed", "grew"):
        return _change_test(cond, path)
    compare: Callable[[str], bool]
    if cond.op == "regex":
        programs = [re2_compile(v, ignore_case=cond.ignore_case) for v in wanted]
        fold = str
        compare = lambda text: any(p.search(text) is not None for p in programs)  # noqa: E731
    elif cond.op in ("in_list", "domain_in_list"):
        members = frozenset().union(*(named_list(v, lists or {}) for v in wanted))
        members = frozenset(fold(m) for m in members)
        if cond.op == "in_list":
            compare = members.__contains__
        else:
            compare = lambda text: "@" in text and text.rpartition("@")[2] in members  # noqa: E731
    elif cond.op == "equals":
        compare = values.__contains__
    elif cond.op == "contains":

        def compare(text: str) -> bool:
            for v in values:  # noqa: SIM110 - a loop: any() makes a generator per event
                if v in text:
                    return True
            return False

    elif cond.op == "starts_with":
        compare = lambda text: text.startswith(values)  # noqa: E731
    else:
        compare = lambda text: text.endswith(values)  # noqa: E731

    def test(data: Mapping[str, Any]) -> bool:
        value = _at_path(data, path)
        if value is None or isinstance(value, _NOT_SCALAR):
            return False
        return compare(fold(str(value).lower() if isinstance(value, bool) else str(value)))

    return test


def _in_networks(path: list[str], networks: list[str]) -> DataTest:
    nets = [ipaddress.ip_network(n) for n in networks]

    def test(data: Mapping[str, Any]) -> bool:
        value = _at_path(data, path)
        if not isinstance(value, str):
            return False
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        return any(address in net for net in nets)

    return test


class WorkingHoursClock:
    """Whether an event time (unix ms) falls inside working hours, in their time zone (None: the local one).

    Answers are cached per minute: a stream's events share minutes, and the zone conversion is the costly part.
    """

    def __init__(self, hours: WorkingHours) -> None:
        self._zone: tzinfo | None = zoneinfo.ZoneInfo(hours.timezone) if hours.timezone else None
        self._start = wall_time.fromisoformat(hours.start)
        self._end = wall_time.fromisoformat(hours.end)
        self._days = frozenset(WEEKDAYS.index(d) for d in hours.days)
        self.cache: dict[int, bool] = {}  # minute (unix ms // 60,000) → inside; read directly by the hot loop

    def inside(self, time_ms: int) -> bool:
        minute = time_ms // _MINUTE_MS
        hit = self.cache.get(minute)
        if hit is None:
            if len(self.cache) > 50_000:
                self.cache.clear()
            hit = self.cache[minute] = self._inside_minute(minute)
        return hit

    def _inside_minute(self, minute: int) -> bool:
        moment = datetime.fromtimestamp(minute * 60, UTC).astimezone(self._zone)
        now, day = moment.time(), moment.weekday()
        start, end = self._start, self._end
        if start == end:  # around the clock on the working days
            return day in self._days
        if start < end:
            return day in self._days and start <= now < end
        # past midnight: the evening part belongs to today, the early-morning part to the day before
        return (now >= start and day in self._days) or (now < end and (day - 1) % 7 in self._days)
