"""Rules tested like code: each fixture's events are stored in a scratch database of their own and evaluated
by the real evaluator (windows, sequences, the entity directory for state checks, earlier objects for changes);
the fixture passes when the rule fired (`expect: fires`) or did not (`quiet`).

Times are seconds after a Wednesday noon UTC; working hours are 08:00–18:00 UTC on weekdays; every event is
evaluated as live (a second after the fixture's last event).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

import orjson

from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.evaluator import Evaluator
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.alerts.rule_model import Rule
from tenant_events.alerts.rule_parts import FixtureEvent, RuleTest
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.wire import EventMessage, decode_frame

BASE: Final = datetime(2026, 11, 4, 12, 0, tzinfo=UTC)  # a Wednesday, noon UTC
HOURS: Final = WorkingHours(start="08:00", end="18:00", timezone="UTC")


@dataclass(frozen=True, slots=True)
class FixtureResult:
    """One fixture's outcome: what was expected, how often the rule fired, and whether that is a pass."""

    rule_id: str
    name: str
    expect: str
    firings: int

    @property
    def passed(self) -> bool:
        return (self.firings > 0) is (self.expect == "fires")

    def line(self) -> str:
        verdict = "ok  " if self.passed else "FAIL"
        fired = "did not fire" if not self.firings else f"fired {self.firings}×"
        return f"{verdict} {self.rule_id}: {self.name} (expected: {self.expect}; {fired})"


def _row(n: int, ev: FixtureEvent) -> EventRow:
    at = BASE + timedelta(seconds=ev.at)
    envelope = {
        "specversion": "1.0",
        "type": ev.type,
        "source": "urn:tenant-events:fixture",
        "id": f"evt_fixture{n:09d}",
        "time": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "data": ev.data,
        "xtenant": "fixture",
        "xstream": "est_fixturefixture00",
    }
    if ev.purpose:
        envelope["xpurpose"] = ev.purpose
    data = orjson.dumps({"offset": f"fixture-{n:09d}", "event": envelope}).decode()
    message = decode_frame(ev.type, data)
    if not isinstance(message, EventMessage):
        raise ValueError(f"fixture event {n} ({ev.type}) is not an event")
    return EventRow.from_message(message, data, received_at=at.timestamp())


def run_fixture(
    rule: Rule,
    test: RuleTest,
    *,
    lists: Mapping[str, frozenset[str]] | None = None,
    scratch: Path | None = None,
) -> FixtureResult:
    """Store the fixture's events in a scratch database, evaluate `rule` over them, count its firings."""
    with tempfile.TemporaryDirectory(prefix="rule-fixture-", dir=scratch) as tmp:
        rows = [_row(i + 1, ev) for i, ev in enumerate(test.events)]
        last = BASE.timestamp() + max(ev.at for ev in test.events) + 1
        live = rule.model_copy(update={"enabled": True})
        engine = RuleEngine(
            [live],
            hours=HOURS,
            profile="fixture",
            catch_up_after_s=10 * 86_400,
            clock=lambda: last,
            lists=lists,
        )
        evaluator = Evaluator(engine)
        path = Path(tmp) / "fixture.sqlite3"
        writer = StoreWriter(path)
        firings = 0
        try:
            # one batch per event, in the fixture's order: the directory sees each before the next is evaluated
            for i, row in enumerate(rows):
                writer.commit_sync(Batch(events=[row], cursor=f"fixture-{i}"))
                result = writer.run_alert_job(evaluator.step).result()
                firings += len(result.raised) + len(result.refired)
        finally:
            writer.close()
    return FixtureResult(rule.id, test.name, test.expect, firings)


def run_rule_tests(rule: Rule, *, lists: Mapping[str, frozenset[str]] | None = None) -> list[FixtureResult]:
    """Every fixture of `rule`, in order."""
    return [run_fixture(rule, test, lists=lists) for test in rule.tests]
