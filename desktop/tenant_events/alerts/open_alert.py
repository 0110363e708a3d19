"""A rule's open alert while evaluation goes on: its firings, the events behind them, what to write next.

It wraps the `AlertWrite` the store commits (store/alert_records.py): a new alert has no `alert_id` until its
first commit; afterwards each commit updates the same row and links only the events added since
(`new_seqs`, at most MAX_ALERT_EVENTS per alert; `event_count` keeps counting). Each firing folded in is a new
version (`occurrences`) with its own evidence (`firing`: its events, their span and types), the way
values/alert_lifecycle.py describes an alert's life; the events of a threshold's burst that goes on after the
crossing join the same firing.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from tenant_events.store.alert_records import AlertWrite, EvalRow
from tenant_events.store.alerts_table import MAX_ALERT_EVENTS
from tenant_events.values.alert_lifecycle import Phase
from tenant_events.values.alerts import Firing, StoredAlert

if TYPE_CHECKING:
    from tenant_events.alerts.rule_model import Rule


def iso_to_ms(text: str) -> int:
    """Unix ms of a stored ISO 8601 time."""
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class OpenAlert:
    """One alert that firings may still fold into."""

    __slots__ = (
        "f_count",
        "f_first",
        "f_last",
        "f_one",
        "f_types",
        "first_time_ms",
        "last_fired_ms",
        "linked",
        "resolved",
        "touched",
        "write",
    )

    def __init__(self, write: AlertWrite, first_time_ms: int, linked: int) -> None:
        self.write = write
        self.first_time_ms = first_time_ms
        self.linked = linked
        self.touched = False  # RuleEngine.feed: already in this feed's list
        self.resolved = False  # by triage or by going quiet: a later firing is a new alert
        # the latest firing's evidence: its events' count, first and last (event time ms, ISO time), types (None
        # while they are all `f_one`: a single-event firing makes no dict); `last_fired_ms` is f_last's time
        self.f_count = 0
        self.f_first: tuple[int, str] = (0, "")
        self.f_last: tuple[int, str] = (0, "")
        self.f_one = ""
        self.f_types: dict[str, int] | None = None
        self.last_fired_ms = 0

    @classmethod
    def start(
        cls,
        rule: Rule,
        events: list[EvalRow],
        catch_up: bool,
        now: float,
        *,
        name: str | None = None,
        group: str = "",
    ) -> OpenAlert:
        """A new alert of `rule` made of `events` (one firing); `name`: the rule's, with its group's label;
        `group`: the group's key."""
        first = events[0]
        write = AlertWrite(
            alert_id=None,
            rule_id=rule.id,
            rule_name=name or rule.name,
            severity=rule.severity,
            tenant=first.tenant,
            catch_up=catch_up,
            notify=rule.notify,
            occurrences=1,
            event_count=0,
            first_seq=first.seq,
            last_seq=first.seq,
            first_event_id=first.event_id,
            last_event_id=first.event_id,
            first_time=first.time,
            last_time=first.time,
            last_time_ms=first.time_ms,
            type_counts={},
            detail="",
            raised_at=now,
            updated_at=now,
            fired_at=now,
            raised_ms=max(e.time_ms for e in events),
            group_key=group,
        )
        alert = cls(write, first.time_ms, 0)
        alert._new_firing(events[0])
        alert.grow(events, now)
        return alert

    @classmethod
    def from_stored(cls, stored: StoredAlert, now: float) -> OpenAlert:
        write = AlertWrite(
            alert_id=stored.id,
            rule_id=stored.rule_id,
            rule_name=stored.rule_name,
            severity=stored.severity,
            tenant=stored.tenant,
            catch_up=stored.catch_up,
            notify=stored.notify,
            occurrences=stored.occurrences,
            event_count=stored.event_count,
            first_seq=stored.first_seq,
            last_seq=stored.last_seq,
            first_event_id=stored.first_event_id,
            last_event_id=stored.last_event_id,
            first_time=stored.first_time,
            last_time=stored.last_time,
            last_time_ms=stored.last_time_ms,
            type_counts=dict(stored.type_counts),
            detail=stored.detail,
            raised_at=stored.raised_at,
            updated_at=stored.updated_at,
            fired_at=stored.fired_at or stored.updated_at,
            raised_ms=stored.raised_ms or stored.last_time_ms,
            group_key=stored.group_key,
        )
        alert = cls(write, iso_to_ms(stored.first_time), min(stored.event_count, MAX_ALERT_EVENTS))
        latest = stored.latest
        alert.f_count = latest.events
        alert.f_first = (latest.first_ms, latest.first_time)
        alert.f_last = (latest.last_ms, latest.last_time)
        alert.last_fired_ms = latest.last_ms
        alert.f_types = dict(latest.types)
        alert.resolved = stored.phase(now) is Phase.RESOLVED
        return alert

    @property
    def catch_up(self) -> bool:
        return self.write.catch_up

    @property
    def updated_at(self) -> float:
        return self.write.updated_at

    @property
    def last_time_ms(self) -> int:
        return self.write.last_time_ms

    @property
    def raised_ms(self) -> int:
        return self.write.raised_ms

    def _new_firing(self, first: EvalRow) -> None:
        self.f_count = 0
        self.f_first = self.f_last = (first.time_ms, first.time)
        self.last_fired_ms = first.time_ms
        self.f_types = {}

    def fire(self, events: list[EvalRow], now: float) -> None:
        """A new firing folds in: one more version (said again, unread again), with these events as its evidence."""
        w = self.write
        w.occurrences += 1
        w.fired_at = now
        w.reopen = w.alert_id is not None
        self._new_firing(events[0])
        self.grow(events, now)

    def grow(self, events: list[EvalRow], now: float) -> None:
        """Events join the latest firing (its own, or a threshold's burst going on at its rate)."""
        w = self.write
        mine = self.f_types
        if mine is None:
            mine = self.f_types = {self.f_one: self.f_count}
        counts = w.type_counts
        for e in events:
            counts[e.type] = counts.get(e.type, 0) + 1
            mine[e.type] = mine.get(e.type, 0) + 1
            if e.time_ms < self.first_time_ms:
                self.first_time_ms = e.time_ms
                w.first_seq, w.first_event_id, w.first_time = e.seq, e.event_id, e.time
            if e.time_ms >= w.last_time_ms:
                w.last_seq, w.last_event_id, w.last_time, w.last_time_ms = (
                    e.seq,
                    e.event_id,
                    e.time,
                    e.time_ms,
                )
            if e.time_ms < self.f_first[0]:
                self.f_first = (e.time_ms, e.time)
            if e.time_ms >= self.f_last[0]:
                self.f_last = (e.time_ms, e.time)
                self.last_fired_ms = e.time_ms
            if self.linked < MAX_ALERT_EVENTS:
                w.new_seqs.append(e.seq)
                self.linked += 1
        self.f_count += len(events)
        w.event_count += len(events)
        w.updated_at = now

    def add_one(self, e: EvalRow, now: float) -> None:
        """`fire([e], now)`, written out: rules without a threshold fire one event at a time."""
        w = self.write
        counts = w.type_counts
        counts[e[2]] = counts.get(e[2], 0) + 1
        ms = e[4]
        if ms < self.first_time_ms:
            self.first_time_ms = ms
            w.first_seq, w.first_event_id, w.first_time = e[0], e[1], e[3]
        if ms >= w.last_time_ms:
            w.last_seq, w.last_event_id, w.last_time, w.last_time_ms = e[0], e[1], e[3], ms
        if self.linked < MAX_ALERT_EVENTS:
            w.new_seqs.append(e[0])
            self.linked += 1
        self.f_count = 1
        self.f_first = self.f_last = (ms, e[3])
        self.last_fired_ms = ms
        self.f_one, self.f_types = e[2], None
        w.event_count += 1
        w.occurrences += 1
        w.updated_at = w.fired_at = now
        if w.alert_id is not None:
            w.reopen = True

    def finish(self) -> AlertWrite:
        """The write with its latest firing's evidence, ready to commit."""
        w = self.write
        types = dict(self.f_types) if self.f_types is not None else {self.f_one: self.f_count}
        first, last = self.f_first, self.f_last
        w.firing = Firing(w.occurrences, self.f_count, first[1], last[1], first[0], last[0], types)
        return w

    def committed(self, alert_id: int) -> None:
        """The write is stored: later writes update row `alert_id` and link only newer events."""
        self.write.alert_id = alert_id
        self.write.new_seqs = []
        self.write.reopen = False
