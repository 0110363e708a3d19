"""The tests a rule applies to one event: type patterns, field conditions on `data`, working hours.

Compiled once per rule set into plain closures, so evaluating a row is a few dict lookups. Field names follow
the real service's payloads (docs/event-stream.md "Payloads", wire/payloads.py): `object.role.name`,
`object.organization.id`, `object.user.user_id`, `object.connection.id`, `context.client.id`.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, tzinfo
from datetime import time as wall_time
from typing import TYPE_CHECKING, Any, Final

from tenant_events.alert_settings import WEEKDAYS, WorkingHours
from tenant_events.alerts.type_patterns import expand_types as expand_types  # a rule's type test

if TYPE_CHECKING:
    from tenant_events.alerts.rule_model import Condition

DataTest = Callable[[Mapping[str, Any]], bool]
_MINUTE_MS: Final = 60_000


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


def compile_condition(cond: Condition) -> DataTest:
    """A test of one event's `data` for `cond`."""
    path = cond.field.split(".")
    fold: Callable[[str], str] = str.casefold if cond.ignore_case else str
    wanted = [cond.value] if isinstance(cond.value, str) else list(cond.value or [])
    values = tuple(fold(v) for v in wanted)
    if cond.op == "exists":
        return lambda data: _at_path(data, path) is not None
    if cond.op == "missing":
        return lambda data: _at_path(data, path) is None
    if cond.op == "mentions":
        return lambda data: any(fold(s) in values for s in _scalars(_at_path(data, path)))
    compare: Callable[[str], bool]
    if cond.op == "equals":
        compare = values.__contains__
    elif cond.op == "contains":
        compare = lambda text: any(v in text for v in values)  # noqa: E731
    elif cond.op == "starts_with":
        compare = lambda text: text.startswith(values)  # noqa: E731
    else:
        compare = lambda text: text.endswith(values)  # noqa: E731

    def test(data: Mapping[str, Any]) -> bool:
        value = _at_path(data, path)
        if value is None or isinstance(value, dict | list):
            return False
        return compare(fold(str(value).lower() if isinstance(value, bool) else str(value)))

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
