"""A rule's open alert while evaluation goes on: the events folded into it, what to write next.

It wraps the `AlertWrite` the store commits (store/alert_records.py): a new alert has no `alert_id` until its
first commit; afterwards each commit updates the same row and links only the events added since
(`new_seqs`, at most MAX_ALERT_EVENTS per alert; `event_count` keeps counting).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from tenant_events.store.alert_records import AlertWrite, EvalRow, StoredAlert
from tenant_events.store.alerts_table import MAX_ALERT_EVENTS

if TYPE_CHECKING:
    from tenant_events.alerts.rule_model import Rule


def iso_to_ms(text: str) -> int:
    """Unix ms of a stored ISO 8601 time."""
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class OpenAlert:
    """One alert that firings may still fold into."""

    __slots__ = ("first_time_ms", "linked", "touched", "write")

    def __init__(self, write: AlertWrite, first_time_ms: int, linked: int) -> None:
        self.write = write
        self.first_time_ms = first_time_ms
        self.linked = linked
        self.touched = False  # RuleEngine.feed: already in this feed's list

    @classmethod
    def start(
        cls, rule: Rule, events: list[EvalRow], catch_up: bool, now: float, *, name: str | None = None
    ) -> OpenAlert:
        """A new alert of `rule` made of `events` (one firing); `name`: the rule's, with its group."""
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
        )
        alert = cls(write, first.time_ms, 0)
        alert.add(events, now, new_firing=False)
        return alert

    @classmethod
    def from_stored(cls, stored: StoredAlert) -> OpenAlert:
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
        )
        return cls(write, iso_to_ms(stored.first_time), min(stored.event_count, MAX_ALERT_EVENTS))

    @property
    def catch_up(self) -> bool:
        return self.write.catch_up

    @property
    def updated_at(self) -> float:
        return self.write.updated_at

    @property
    def last_time_ms(self) -> int:
        return self.write.last_time_ms

    def add(self, events: list[EvalRow], now: float, *, new_firing: bool) -> None:
        """Fold events in; `new_firing` counts one more occurrence (and makes a read alert unread again)."""
        w = self.write
        counts = w.type_counts
        for e in events:
            counts[e.type] = counts.get(e.type, 0) + 1
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
            if self.linked < MAX_ALERT_EVENTS:
                w.new_seqs.append(e.seq)
                self.linked += 1
        w.event_count += len(events)
        w.updated_at = now
        if new_firing:
            w.occurrences += 1
            w.reopen = w.alert_id is not None

    def add_one(self, e: EvalRow, now: float) -> None:
        """`add([e], now, new_firing=True)`, written out: rules without a threshold fold one event at a time."""
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
        w.event_count += 1
        w.occurrences += 1
        w.updated_at = now
        if w.alert_id is not None:
            w.reopen = True

    def committed(self, alert_id: int) -> None:
        """The write is stored: later writes update row `alert_id` and link only newer events."""
        self.write.alert_id = alert_id
        self.write.new_seqs = []
        self.write.reopen = False
