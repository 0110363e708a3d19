"""Plain records that cross the store's boundary for alerts: rows the rules read, alerts written and read back.

The evaluator (alerts/evaluator.py) reads `RowSegment`s, decides, and hands `AlertWrite`s back with the new
watermark (alerts_table.AlertLedger.commit); the inbox and the CLI read `StoredAlert`s (values/alerts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

from tenant_events.store.directory import Rel
from tenant_events.values.alerts import Firing, Severity, StoredAlert

# (first seq, rows in EventRow's column order); first None: each row's seq is its last column (alert_rows.py)
RowSegment: TypeAlias = tuple[int | None, Sequence[tuple[Any, ...]]]


class EvalRow(NamedTuple):
    """One stored event a rule counted (in a window, behind an alert); `raw` may be None when no rule inspects
    events of its type."""

    seq: int
    event_id: str
    type: str
    time: str
    time_ms: int
    tenant: str
    purpose: str | None
    raw: str | None


class HeldLink(NamedTuple):
    """A link of the entity directory that holds now, as the rules' state checks start from it after a restart:
    its relation and ends (store/directory.py's links table), its add stamp, its role's name (role links) and,
    when one end is an organization's group, that group's organization."""

    rel: Rel
    a: str
    b: str
    c: str
    added: int
    role: str | None
    group_org: str | None


@dataclass(slots=True)
class AlertWrite:
    """A new alert (`alert_id` None) or the new state of an open one; `new_seqs` are events to link to it."""

    alert_id: int | None
    rule_id: str
    rule_name: str
    severity: Severity
    tenant: str
    catch_up: bool
    notify: bool
    occurrences: int
    event_count: int
    first_seq: int
    last_seq: int
    first_event_id: str
    last_event_id: str
    first_time: str
    last_time: str
    last_time_ms: int
    type_counts: dict[str, int]
    detail: str
    raised_at: float
    updated_at: float
    fired_at: float = 0.0  # wall clock of the latest firing (0: `raised_at`)
    raised_ms: int = 0  # event time of the firing that raised it (0: the last event's)
    firing: Firing | None = None  # the latest firing's evidence
    group_key: str = ""  # a grouped rule's group ("": no group_by)
    new_seqs: list[int] = field(default_factory=list)
    reopen: bool = False  # a new firing folded in: a new version, unread again

    def as_new(self, alert_id: int) -> StoredAlert:
        """The alert this write, inserted as row `alert_id`, reads back as (unread, untriaged): a catch-up raises
        thousands, and reading each back cost more than its insert."""
        return StoredAlert(
            *(alert_id, self.rule_id, self.rule_name, self.severity, self.tenant, self.catch_up, self.notify),
            *(self.occurrences, self.event_count, self.first_seq, self.last_seq, self.first_event_id),
            *(self.last_event_id, self.first_time, self.last_time, self.last_time_ms, dict(self.type_counts)),
            *(self.detail, self.raised_at, self.updated_at, None, self.fired_at or self.raised_at),
            *(self.raised_ms or self.last_time_ms, self.firing, None, None, self.group_key),
        )
