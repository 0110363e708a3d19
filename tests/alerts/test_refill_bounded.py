"""A restart of the rules (a new process, or a step that failed: a lock held too long on a loaded machine) refills
their windows from the stored past: each type's own stretch of it (a burst's two windows, a novelty's weeks),
a span of seqs at a time, never every event of the longest stretch in memory at once. In a long catch-up a
reload once read every event of the backlog's threshold types into memory (500 MB), while the store waited.
A step that failed on a lock says so as news: nothing is lost, and there is nothing for the user to free."""

from __future__ import annotations

import tracemalloc
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

from helpers.alert_events import clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.alerts import evaluator as evaluator_module
from tenant_events.errors import StorageError
from tenant_events.store import AlertLedger, Batch, StoreWriter
from tenant_events.store.alert_records import RowSegment
from tenant_events.store.schema import connect

OFFICE = WorkingHours(start="08:00", end="18:00", timezone="UTC")
DAYS = 3
SPAN = 500


class Spans(AlertLedger):
    """The store's ledger, noting each span of history the evaluator reads and the types in it."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self.spans: list[list[tuple[Any, ...]]] = []

    def history(
        self, since: dict[int, list[str]], after: int, upto: int, raw_types: Collection[str]
    ) -> list[RowSegment]:
        found = super().history(since, after, upto, raw_types)
        self.spans += [list(rows) for _first, rows in found]
        return found


def _evaluator(clock: Any) -> Evaluator:
    rules = load_rules([], BUILTIN_RULES).rules
    engine = RuleEngine(rules, hours=OFFICE, profile="demo", catch_up_after_s=300, clock=clock)
    return Evaluator(engine)


def test_a_restart_refills_each_type_from_its_own_stretch_a_span_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluator_module, "HISTORY_SEQS", SPAN)
    minutes = DAYS * 24 * 60
    # a deletion every 15 seconds for three days (the mass-deletion windows: minutes), and a role given every
    # ten minutes (the new-actor novelty: 30 days) by one of a hundred clients, in turn
    rows = [event("user.deleted", q * 15.0) for q in range(minutes * 4)]
    for m in range(0, minutes, 10):
        rows.append(
            event("organization.member.role.assigned", m * 60.0 + 1, client=(f"cli{m % 100}", "A client"))
        )
    rows.sort(key=lambda r: r.time_ms)
    clock = clock_at(minutes * 60.0)
    db = tmp_path / "demo.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=rows, cursor="past"))
        writer.run_alert_job(_evaluator(clock).step).result()  # every event evaluated, the watermark stored
        writer.index_all_sync()  # (the names and access links read at a restart come from the directory)
        writer.commit_sync(Batch(events=[event("user.deleted", minutes * 60.0)], cursor="now"))
        restarted = _evaluator(clock)
        ledgers: list[Spans] = []

        def step(ledger: AlertLedger) -> Any:
            ledgers.append(Spans(ledger._conn))
            return restarted.step(ledgers[-1])

        tracemalloc.start()
        try:
            writer.run_alert_job(step).result()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        writer.close()
    spans = ledgers[0].spans
    read = [row for span in spans for row in span]
    deletions = [row for row in read if row[2] == "user.deleted"]
    grants = [row for row in read if row[2] == "organization.member.role.assigned"]
    # Before: one stretch for every type, the longest (30 days): all 17,280 deletions read back, in one list.
    assert len(deletions) <= 90, f"{len(deletions)} deletions read back for windows of minutes"
    assert len(grants) == minutes // 10, "every grant within the novelty's 30 days is read back"
    assert max(len(span) for span in spans) <= SPAN
    assert [row[11] for row in read] == sorted(row[11] for row in read), "in stored order"
    # what the restart held at its most: 2.4 MB here; before, 18.6 MB (every deletion of the three days at once)
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB held to refill the windows"


def test_a_write_lock_held_past_the_timeout_says_the_rules_go_on_not_to_free_disk_space(
    tmp_path: Path,
) -> None:
    db = tmp_path / "demo.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(Batch(events=[event("user.deleted", 0.0)], cursor="c1"))
    writer.close()
    holder, rules = connect(db), connect(db)
    rules.execute("PRAGMA busy_timeout = 50")
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, longer than the rules wait
    try:
        with pytest.raises(StorageError) as failed:
            AlertLedger(rules).commit([], 0, 1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        rules.close()
    assert "database is locked" in failed.value.message
    assert failed.value.hint == "the rules go on from their last stored alert"
