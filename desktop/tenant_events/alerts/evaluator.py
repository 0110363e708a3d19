"""Evaluates the rules over COMMITTED events, exactly once, by stored seq (never over frames in flight).

    commit (writer thread) ──▶ step(ledger): rows watermark+1 … newest ──▶ RuleEngine.feed ──▶ alerts
                                            └── one transaction: alerts written + watermark moved ──┘

`step` runs on the writer thread (StoreWriter.run_alert_job, driven by runner.py), one chunk of seqs per
transaction. Why each alert is raised once:
  * the watermark (`counters.alerts_upto`) moves in the same transaction as the alerts, compare-and-set
    (alerts_table.AlertLedger.commit): a crash before it means the chunk is evaluated again from scratch, a crash
    after it means it is never evaluated again;
  * a duplicate delivery or a replay never becomes a new row (the store's dedupe key), so never a new seq;
  * after a restart (or any failed step) the in-memory state is rebuilt from the store: each rule's newest alert,
    and the threshold windows and sequences refilled from the events just before the watermark, each marked
    with whether an alert already holds it (one event is behind one firing of a rule at most); the state
    checks' links (access_state.py) are read back from the entity directory and the events it does not cover.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from tenant_events.alerts import access_state
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.rule_engine import RuleEngine, eval_rows, event_data
from tenant_events.entities.sentences import describe_stored
from tenant_events.store.alerts_table import AlertLedger
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)

EVAL_CHUNK: Final = 5000  # seqs per transaction: a catch-up of 1M events commits alerts every 5,000
RESTORE_CHUNK: Final = 50_000  # seqs read at once when the state checks' links are restored


@dataclass
class StepResult:
    """What one step did: alerts raised (new) and updated (folded into), and how far it got."""

    raised: list[StoredAlert] = field(default_factory=list)
    updated: list[StoredAlert] = field(default_factory=list)
    watermark: int = 0
    evaluated: int = 0  # seqs covered (rows of no rule's type included)
    refired: set[int] = field(default_factory=set)  # updated alerts a new firing folded into (unread again)
    _where: dict[int, tuple[bool, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def alerts(self) -> list[StoredAlert]:
        return self.raised + self.updated

    def add(self, alert: StoredAlert, *, new: bool) -> None:
        """Record an alert's latest state; one raised in this step stays "raised" however often it changed."""
        where = self._where.get(alert.id)
        if where is not None:
            (self.raised if where[0] else self.updated)[where[1]] = alert
            return
        group = self.raised if new else self.updated
        self._where[alert.id] = (new, len(group))
        group.append(alert)


class Evaluator:
    """The rule engine bound to one tenant database's watermark."""

    def __init__(self, engine: RuleEngine, *, chunk: int = EVAL_CHUNK) -> None:
        self.engine = engine
        self.chunk = chunk
        self.watermark: int | None = None  # None: (re)load from the store before the next step
        # catch-up alerts whose detail was said before the directory reached their latest event (its names):
        # alert id → that event's seq; said again once the idle-time indexer has brought the directory there
        self._unnamed: dict[int, int] = {}

    def step(self, ledger: AlertLedger) -> StepResult:
        """Evaluate every committed event after the watermark. On any error the state is reloaded next time."""
        try:
            return self._step(ledger)
        except BaseException:
            self.watermark = None
            raise

    def _step(self, ledger: AlertLedger) -> StepResult:
        if self.watermark is None:
            self._load(ledger)
        assert self.watermark is not None
        result = StepResult(watermark=self.watermark)
        newest = ledger.newest_seq()
        engine = self.engine
        engine.names = _directory_names(ledger)
        engine.earlier = ledger.earlier_object
        if self._unnamed:
            self._name_late(ledger, result)
        while self.watermark < newest:
            end = min(newest, self.watermark + self.chunk)
            rows = ledger.rows(self.watermark, end, engine.types, engine.raw_types) if engine.by_type else []
            touched = engine.feed(rows)
            named_upto = end
            if touched:
                # A new or live alert's names are worth bringing the directory up (a little) for; a catch-up
                # alert's later events are not: that would keep the whole directory during the backlog
                # (bench/rules_cost.py). Their detail is said again once the indexer has caught up.
                refresh = any(not a.write.catch_up or a.write.alert_id is None for a in touched)
                directory = ledger.directory(refresh=refresh)
                named_upto = directory.watermark()
                details = _details(directory, ledger, [alert.write.last_seq for alert in touched])
                for alert in touched:
                    alert.write.detail = details.get(alert.write.last_seq) or alert.write.detail
            ids = ledger.commit([a.write for a in touched], self.watermark, end)
            for alert, alert_id in zip(touched, ids, strict=True):
                if alert.write.reopen:
                    result.refired.add(alert_id)
                result.add(_stored(alert, alert_id), new=alert.write.alert_id is None)
                if alert.write.last_seq > named_upto:
                    self._unnamed[alert_id] = alert.write.last_seq
                else:
                    self._unnamed.pop(alert_id, None)
                alert.committed(alert_id)
            result.evaluated += end - self.watermark
            self.watermark = result.watermark = end
        return result

    def _name_late(self, ledger: AlertLedger, result: StepResult) -> None:
        """Say again, with names, the details of catch-up alerts the directory has now reached."""
        directory = ledger.directory(refresh=False)
        upto = directory.watermark()
        ready = {alert_id: seq for alert_id, seq in self._unnamed.items() if seq <= upto}
        if not ready:
            return
        for alert_id in ready:
            del self._unnamed[alert_id]
        details = _details(directory, ledger, list(ready.values()))
        renamed = ledger.rename({i: (seq, details[seq]) for i, seq in ready.items() if seq in details})
        for alert in self.engine.open.values():
            stored_id = alert.write.alert_id
            if stored_id is not None and stored_id in renamed:
                alert.write.detail = details[ready[stored_id]]
                result.add(_stored(alert, stored_id), new=False)

    def _load(self, ledger: AlertLedger) -> None:
        engine = self.engine
        engine.reset()
        self._unnamed = {}
        engine.names = _directory_names(ledger)
        watermark = ledger.watermark()
        recent = []
        if engine.threshold_types and watermark:
            newest_ms = ledger.time_before(watermark)
            if newest_ms is not None:
                since = newest_ms - engine.history_ms
                recent = ledger.rows_since(since, watermark, engine.threshold_types, engine.raw_types)
        engine.restore(ledger.latest_alerts(), recent, ledger.linked(recent))
        if engine.access is not None:
            self._restore_access(ledger, watermark)
        self.watermark = watermark
        log.debug(
            "alert evaluation resumes after seq %d (%d events refill the windows)", watermark, len(recent)
        )

    def _restore_access(self, ledger: AlertLedger, watermark: int) -> None:
        """The state checks' links as of the watermark: those the entity directory holds, then the stored events
        up to the watermark it does not cover yet (left to the idle-time indexer during a catch-up)."""
        access = self.engine.access
        assert access is not None
        links, upto = ledger.access_links()
        access.load(links)
        for low in range(upto, watermark, RESTORE_CHUNK):
            rows = ledger.rows(
                low, min(watermark, low + RESTORE_CHUNK), access_state.TYPES, access_state.TYPES
            )
            for row in eval_rows(rows):
                if row.type in access_state.TYPES:  # (rows held in memory come of every type)
                    access.apply(row.type, row.time_ms, row.seq, event_data(row))


def _directory_names(ledger: AlertLedger) -> Callable[[str, str], str | None]:
    """What the directory calls an id ("grace@example.com" for a user), for a grouped alert's name; the directory
    is opened only when a firing needs a name (rarely: once per new group alert), as it stands: live it holds
    every committed event, and during a catch-up bringing it up would cost the whole directory (the name the
    event itself gives is used instead, compiled_rule.py)."""
    opened: list[DirectoryReader] = []

    def name_of(kind: str, ident: str) -> str | None:
        if not opened:
            opened.append(ledger.directory(refresh=False))
        found = opened[0].entity(kind, ident)
        return found.label if found is not None and found.label != ident else None

    return name_of


def _stored(alert: OpenAlert, alert_id: int) -> StoredAlert:
    """The alert as the store now holds it (read state is the inbox's: an update may have been read)."""
    w = alert.write
    return StoredAlert(
        id=alert_id,
        rule_id=w.rule_id,
        rule_name=w.rule_name,
        severity=w.severity,
        tenant=w.tenant,
        catch_up=w.catch_up,
        notify=w.notify,
        occurrences=w.occurrences,
        event_count=w.event_count,
        first_seq=w.first_seq,
        last_seq=w.last_seq,
        first_event_id=w.first_event_id,
        last_event_id=w.last_event_id,
        first_time=w.first_time,
        last_time=w.last_time,
        last_time_ms=w.last_time_ms,
        type_counts=dict(w.type_counts),
        detail=w.detail,
        raised_at=w.raised_at,
        updated_at=w.updated_at,
        read_at=None,
    )


def _details(directory: DirectoryReader, ledger: AlertLedger, seqs: list[int]) -> dict[int, str]:
    """Each event's sentence with names from the directory ("grace@example.com added to organization Stark"),
    ids where a name is not known yet, in one directory lookup for the whole chunk; the stored summary for an
    event the directory cannot read."""
    sentences = describe_stored(directory, seqs)
    details: dict[int, str] = {}
    for seq in seqs:
        sentence = sentences.get(seq)
        if sentence is None:
            summary = ledger.summary(seq)
            if summary:
                details[seq] = summary
            continue
        text = sentence.text
        # A line of its own in a notification: a leading word is capitalised, a leading name (an email) is not.
        lead = sentence.parts and isinstance(sentence.parts[0], str)
        details[seq] = text[:1].upper() + text[1:] if lead else text
    return details
