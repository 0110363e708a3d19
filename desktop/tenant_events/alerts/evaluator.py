"""Evaluates the rules over COMMITTED events, exactly once, by stored seq (never over frames in flight).

    commit (writer thread) ─kick─▶ step(ledger): rows watermark+1 … newest ──▶ RuleEngine.feed ──▶ alerts
                                   └── one transaction: alerts written + watermark moved ──┘

`step` runs in the rules' own process on its own connection (evaluator_child.py, driven by runner.py), a chunk
of seqs at a time, each read in a statement of its own (no snapshot is held from one chunk to the next, so the
store's checkpoints never wait on one), and written in a transaction when it raised something or ends the step
(there, for `step_s` at most); the rows are read by type (only the types some rule or state check reads, and
the raw JSON only of those whose payload is read). Why each alert is raised once:
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
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from tenant_events.alerts import access_state
from tenant_events.alerts.open_alert import OpenAlert
from tenant_events.alerts.rule_engine import RuleEngine, eval_rows, event_data
from tenant_events.entities.sentences import NamesNow, NamesThen, NamesUpTo, describe_payloads
from tenant_events.store.alert_rows import HISTORY_SEQS
from tenant_events.store.alerts_table import NAMES_CATCH_UP, AlertLedger
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.team_state import TeamState, adopt
from tenant_events.values.alert_lifecycle import RULES_WHO, quiet_resolve_due
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage

log = logging.getLogger(__name__)

EVAL_CHUNK: Final = 5000  # seqs per transaction: a catch-up of 1M events commits alerts every 5,000
RESTORE_CHUNK: Final = 50_000  # seqs read at once when the state checks' links are restored
LATE_NAMES_S: Final = (
    2.0  # how often (at most) growing alerts' details are said again with names at their time
)
QUIET_CHECK_S: Final = 5.0  # how often (at most) alerts are looked at for a resolve by going quiet


@dataclass
class StepResult:
    """What one step did: alerts raised (new) and updated (folded into), alerts whose phase changed (`settled`:
    acknowledged, snoozed, resolved or reopened by anyone, or resolved by going quiet), and how far it got."""

    raised: list[StoredAlert] = field(default_factory=list)
    updated: list[StoredAlert] = field(default_factory=list)
    watermark: int = 0
    evaluated: int = 0  # seqs covered (rows of no rule's type included)
    more: bool = False  # stopped at its time bound with committed events left: the next step goes on
    refired: set[int] = field(default_factory=set)  # updated alerts a new firing folded into (a new version)
    settled: list[StoredAlert] = field(default_factory=list)
    position: tuple[str, int] | None = None  # (event id, time ms) of the last event evaluated, when it moved
    # a team's state was adopted: its recent alerts are queued for delivery again (a takeover's worker must look)
    adopted: bool = False
    _where: dict[int, tuple[bool, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def alerts(self) -> list[StoredAlert]:
        return self.raised + self.updated

    @property
    def changed(self) -> bool:
        """Whether the step has anything for the observers."""
        return bool(self.raised or self.updated or self.settled or self.adopted)

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

    def __init__(self, engine: RuleEngine, *, chunk: int = EVAL_CHUNK, step_s: float | None = None) -> None:
        self.engine = engine
        self.chunk = chunk
        # At most this long a step (then it stops after its chunk, with `more`): a catch-up goes in steps, so the
        # rules' process hears its parent between them. None: every committed event in one step.
        self.step_s = step_s
        self.watermark: int | None = None  # None: (re)load from the store before the next step
        # alerts whose detail was said with the names of the moment (growing ones), or before the directory reached
        # their latest event: alert id → (that event's seq, the words said); said again with the names at its time
        # once they stop growing, or every LATE_NAMES_S, and the directory has reached it (`_name_late`)
        self._unnamed: dict[int, tuple[int, str]] = {}
        self._named_at = 0.0
        self._triage_row = 0  # the newest triage log row seen: later ones are phase changes to pass on
        self.resume: TeamState | None = None  # a team relay's state to adopt before the first step
        self._quiet_checked = 0.0
        self._named_catch_up: set[str] = (
            set()
        )  # rules whose first catch-up alert had the directory brought up
        resolving = [c.resolve_after_ms / 1000 for c in engine.compiled if c.resolve_after_ms]
        self._resolve_after = {c.id: c.resolve_after_ms / 1000 for c in engine.compiled if c.resolve_after_ms}
        # how often a step without commits is wanted (runner.py): resolves by quiet time, triage by others
        self.tick_s: float = min([QUIET_CHECK_S, *(r / 10 for r in resolving)])

    def step(self, ledger: AlertLedger) -> StepResult:
        """Evaluate every committed event after the watermark. On any error the state is reloaded next time."""
        try:
            return self._step(ledger)
        except BaseException:
            self.watermark = None
            raise

    def _step(self, ledger: AlertLedger) -> StepResult:
        adopted = False
        if self.watermark is None and self.resume is not None:
            state, now = self.resume, self.engine.clock()
            taken = ledger.in_transaction(lambda conn: adopt(conn, state, now))
            if taken is None:
                return StepResult()  # its position is not stored here yet: the next commit tries again
            self.resume, adopted = None, True
            log.info(
                "alert evaluation adopts the team's: %d alerts, from seq %d", len(state.alerts), taken[0]
            )
            self._load(ledger)
            self.engine.spent_after = taken[1]
        if self.watermark is None:
            self._load(ledger)
        assert self.watermark is not None
        result = StepResult(watermark=self.watermark, adopted=adopted)
        then: NamesThen | None = None
        newest = ledger.newest_seq()
        engine = self.engine
        engine.names = _directory_names(ledger)
        engine.earlier = ledger.earlier_object
        if self._unnamed and (self.watermark >= newest or time.monotonic() - self._named_at >= LATE_NAMES_S):
            self._name_late(ledger, result, newest)  # stopped growing, or said with today's names long enough
        self._resolve_quiet(ledger)
        self._triaged(ledger, result)
        stored = self.watermark  # the watermark as stored: a chunk that raised nothing does not write it
        until = None if self.step_s is None else time.monotonic() + self.step_s
        while self.watermark < newest:
            end = min(newest, self.watermark + self.chunk)
            rows = ledger.rows(self.watermark, end, engine.types, engine.raw_types) if engine.by_type else []
            touched = engine.feed(rows)
            # the step's last chunk: the newest, or the time is up (this chunk's own time counted)
            last = end >= newest or (until is not None and time.monotonic() >= until)
            named_upto, exact = end, set()
            if touched:
                # Said at once with the names at the event's time: what is notified and delivered now (live
                # alerts raised or with a new version; a catch-up's first alert of each rule, which its summary
                # names), with the directory brought up a little for them. Every other touched alert (a growing
                # one, a catch-up's next groups all through a backlog) is worded with the names the directory
                # holds now, in the same two queries, and said again once it stops growing (`_name_late`): a look
                # at each renamed entity's history per growing alert per chunk was most of the rules' CPU.
                said = self._to_say(touched)
                directory = ledger.directory(refresh=bool(said))
                named_upto = directory.watermark()
                exact = {id(a) for a in said}
                # (a step's names at the time hold for every event it evaluates: later commits come after them)
                then = then or NamesUpTo(directory)
                details = _details(
                    directory,
                    ledger,
                    [a.write.last_seq for a in said],
                    [a.write.last_seq for a in touched if id(a) not in exact],
                    then,
                )
                for alert in touched:
                    alert.write.detail = details.get(alert.write.last_seq) or alert.write.detail
            if not touched and not last:
                # Nothing raised: the watermark moves in memory only, and is stored with the next alerts or at the
                # step's end (a crash before that evaluates these events again, from the stored state): a
                # catch-up writes once a step, not once a chunk, and leaves the write lock to the store.
                result.evaluated += end - self.watermark
                self.watermark = end
                continue
            ids = ledger.commit([a.finish() for a in touched], stored, end)
            stored = end
            # updated alerts as stored now (read, triaged by anyone); a new one as it was written
            found = ledger.alerts_by_id(
                [i for a, i in zip(touched, ids, strict=True) if a.write.alert_id is not None]
            )
            for alert, alert_id in zip(touched, ids, strict=True):
                if alert.write.reopen:
                    result.refired.add(alert_id)
                new = alert.write.alert_id is None
                result.add(alert.write.as_new(alert_id) if new else found[alert_id], new=new)
                if alert.write.last_seq > named_upto or id(alert) not in exact:
                    self._unnamed[alert_id] = (alert.write.last_seq, alert.write.detail)
                else:
                    self._unnamed.pop(alert_id, None)
                alert.committed(alert_id)
            result.evaluated += end - self.watermark
            self.watermark = result.watermark = end
            if last:
                result.more = end < newest
                break
        if result.evaluated:
            result.position = ledger.position(self.watermark)
        return result

    def _to_say(self, touched: list[OpenAlert]) -> list[OpenAlert]:
        """The touched alerts to name at once: live ones raised or with a new version, and a catch-up's first
        alert of each rule (once per catch-up)."""
        firsts = {a.write.rule_id for a in touched if a.write.catch_up and a.write.alert_id is None}
        if not firsts and not any(a.write.catch_up for a in touched):
            self._named_catch_up = set()  # the catch-up is over: the next one names its first alerts again
        new = firsts - self._named_catch_up
        self._named_catch_up |= new
        now = []
        for alert in touched:
            w = alert.write
            if not w.catch_up and (w.alert_id is None or w.reopen):
                now.append(alert)
            elif w.catch_up and w.alert_id is None and w.rule_id in new:
                new.discard(w.rule_id)
                now.append(alert)
        return now

    def _open_by_id(self) -> dict[int, OpenAlert]:
        return {a.write.alert_id: a for a in self.engine.open.values() if a.write.alert_id is not None}

    def _triaged(self, ledger: AlertLedger, result: StepResult) -> None:
        """Phase changes someone made since the last step (the inbox, `triage`, a teammate): a resolved open
        alert takes no more firings, a reopened one does again; the observers hear of each."""
        changes, self._triage_row = ledger.triage_since(self._triage_row)
        if not changes:
            return
        opened = self._open_by_id()
        for alert_id, state in changes:
            if alert_id in opened:
                opened[alert_id].resolved = state == "resolved"
        found = ledger.alerts_by_id(list(dict.fromkeys(a for a, _ in changes)))
        result.settled += [found[a] for a in dict.fromkeys(a for a, _ in changes) if a in found]

    def _resolve_quiet(self, ledger: AlertLedger) -> None:
        """Resolve the alerts whose rule's `resolve_after_minutes` have passed without a firing (looked at every
        `tick_s` at most); each resolve is a triage entry by RULES_WHO, delivered where it is wanted, and reaches
        the observers as any triage does (`_triaged`)."""
        now = self.engine.clock()
        if not self._resolve_after or now - self._quiet_checked < self.tick_s:
            return
        self._quiet_checked = now
        entries = []
        for alert in ledger.unresolved_before(now - min(self._resolve_after.values()), self._resolve_after):
            after_s = self._resolve_after.get(alert.rule_id, 0.0)
            if quiet_resolve_due(alert.phase(now), alert.fired_at, after_s, now):
                note = f"no firing for {after_s / 60:g} min"
                entries.append(Triage(alert.id, "resolved", RULES_WHO, now, None, note))
        if entries:
            ledger.resolve(entries)

    def _name_late(self, ledger: AlertLedger, result: StepResult, newest: int) -> None:
        """Say again, with the names at their event's time, the details of alerts worded with the names of the
        moment (growing ones) or before the directory reached their event: all at once, one look-up per renamed
        entity however many alerts name it, and written only where the words changed. Not while the indexer is
        far behind the store (a catch-up): each look-up would search the events it has not indexed yet."""
        self._named_at = time.monotonic()
        directory = ledger.directory(refresh=False)
        upto = directory.watermark()
        if newest - upto > NAMES_CATCH_UP:
            return
        ready = {alert_id: held for alert_id, held in self._unnamed.items() if held[0] <= upto}
        if not ready:
            return
        for alert_id in ready:
            del self._unnamed[alert_id]
        details = _details(directory, ledger, [seq for seq, _said in ready.values()])
        changed = {
            i: (seq, details[seq]) for i, (seq, said) in ready.items() if details.get(seq, said) != said
        }
        if not changed:
            return
        renamed = ledger.rename(changed)
        stored = ledger.alerts_by_id(list(renamed))
        for alert in self.engine.open.values():
            stored_id = alert.write.alert_id
            if stored_id is not None and stored_id in renamed:
                alert.write.detail = changed[stored_id][1]
                result.add(stored[stored_id], new=False)

    def _load(self, ledger: AlertLedger) -> None:
        engine = self.engine
        engine.reset()
        self._unnamed = {}
        engine.names = _directory_names(ledger)
        watermark = ledger.watermark()
        refilled = self._refill(ledger, watermark)
        engine.reopen(ledger.latest_alerts())
        if not self._triage_row:  # a first start: the triage made before is no news
            self._triage_row = ledger.newest_triage_row()
        if engine.access is not None:
            self._restore_access(ledger, watermark)
        self.watermark = watermark
        log.debug("alert evaluation resumes after seq %d (%d events refill the windows)", watermark, refilled)

    def _refill(self, ledger: AlertLedger, watermark: int) -> int:
        """The rules' windows, sequences and novelty sightings refilled from the events before the watermark,
        each type's `history_ms` of them, HISTORY_SEQS seqs at a time: a novelty period's weeks of a few types,
        never every event of those weeks in memory at once (a reload in a long catch-up held 500 MB)."""
        engine = self.engine
        newest_ms = ledger.time_before(watermark) if engine.history_ms and watermark else None
        if newest_ms is None:
            return 0
        since: dict[int, list[str]] = {}
        for name, ms in sorted(engine.history_ms.items()):
            since.setdefault(newest_ms - ms, []).append(name)
        # each group from its own first seq: a span before it is not read for that group (a burst's types are
        # not walked through a novelty's weeks only to be left out by their time)
        starts = {ms: first for ms in since if (first := ledger.history_start(ms)) is not None}
        refilled = 0
        for after in range(min(starts.values()) - 1, watermark, HISTORY_SEQS) if starts else ():
            upto = min(watermark, after + HISTORY_SEQS)
            groups = {ms: names for ms, names in since.items() if ms in starts and starts[ms] <= upto}
            rows = ledger.history(groups, after, upto, engine.raw_types)
            engine.restore(rows, ledger.linked(rows))
            refilled += sum(len(r) for _first, r in rows)
        return refilled

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


def _details(
    directory: DirectoryReader,
    ledger: AlertLedger,
    seqs: list[int],
    quick: list[int] | None = None,
    then: NamesThen | None = None,
) -> dict[int, str]:
    """Each event's sentence with names from the directory ("grace@example.com added to organization Stark"),
    ids where a name is not known yet; `seqs` with the names at the event's time (a look-up per entity renamed
    since, kept in `then` for a whole step), `quick` with the names the directory holds now. Two directory queries
    for all of them; the stored summary for an event the directory cannot read."""
    payloads = directory.event_data([*seqs, *(quick or ())])
    wanted = set(seqs)
    exact = {s: p for s, p in payloads.items() if s in wanted}
    sentences = describe_payloads(directory, exact, then) if exact else {}
    rest = {s: p for s, p in payloads.items() if s not in exact}
    if rest:
        sentences.update(describe_payloads(directory, rest, NamesNow(directory)))
    details: dict[int, str] = {}
    for seq in [*seqs, *(quick or ())]:
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
