"""The writer's recent rows (kept so the alert rules need not read each batch back) are let go once the rules have
read past them: a desktop following a quiet tenant no longer holds its last 4,000 events' raw JSON for good."""

from __future__ import annotations

from helpers.alert_events import clock_at, event
from helpers.events_factory import row
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import BUILTIN_RULES, Evaluator, RuleEngine, load_rules
from tenant_events.alerts.rule_engine import eval_rows
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.alert_rows import RecentRows


def test_batches_read_past_are_let_go_and_an_earlier_range_is_left_to_the_table():
    recent = RecentRows(max_rows=100)
    recent.add(1, [row(i) for i in range(5)])  # seqs 1-5
    recent.add(6, [row(i) for i in range(5, 8)])  # 6-8
    recent.add(9, [row(i) for i in range(8, 10)])  # 9-10
    assert recent.held == 10
    first = recent.segments(0, 5)
    assert first is not None and [len(rows) for _, rows in first] == [5]
    assert recent.held == 10  # nothing read past yet
    held = recent.segments(5, 10)
    assert held is not None and [(start, len(rows)) for start, rows in held] == [(6, 3), (9, 2)]
    assert recent.held == 5  # seqs 1-5 are behind the reader
    assert recent.segments(7, 10) is not None and recent.held == 5  # 6-8 is still partly ahead of seq 7
    assert recent.segments(10, 10) == [] and recent.held == 0
    assert recent.segments(2, 4) is None  # asked again for what was let go: the table answers


def test_the_rules_stepping_through_live_batches_leave_the_writer_holding_nothing(tmp_path):
    """The real evaluator over a real writer, as the app runs them: commit, step, commit, step."""
    rules = load_rules([], BUILTIN_RULES).rules
    evaluator = Evaluator(
        RuleEngine(rules, hours=WorkingHours(), profile="demo", catch_up_after_s=300, clock=clock_at(0))
    )
    writer = StoreWriter(tmp_path / "demo.sqlite3")
    try:
        for n in range(6):
            batch = [event("user.created", n * 10 + i) for i in range(50)]
            writer.commit_sync(Batch(events=batch, cursor=f"c{n}"))
            writer.run_alert_job(evaluator.step).result()
            held = writer.run_alert_job(lambda ledger: ledger._recent.held).result()
            assert held <= 50, f"after batch {n} the writer still holds {held} rows the rules have read"
        rows = writer.run_alert_job(lambda ledger: list(eval_rows(ledger.rows(0, 300, None, set())))).result()
        assert [r.seq for r in rows] == list(range(1, 301))  # what was let go is still read, from the table
    finally:
        writer.close()
