"""Two rules that look at what one update changed both see the object as it was before it: the first to ask
must not leave the update itself as the "before" the second is shown (live, several rules run together; a
backtest of several rules runs them in one pass too)."""

from __future__ import annotations

from helpers.entity_events import T0, envelope_row
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.alerts.rule_model import Rule

BLOCKED = Rule(
    id="blocked",
    name="User blocked",
    types=["user.updated"],
    conditions=[{"field": "object.blocked", "op": "changed", "changed_to": "true"}],
)
EMAIL = Rule(
    id="email-changed",
    name="E-mail changed",
    types=["user.updated"],
    conditions=[{"field": "object.email", "op": "changed"}],
)
BEFORE = {"user_id": "auth0|1", "email": "ada@example.com", "blocked": False, "name": "Ada"}


def test_each_rule_on_an_update_compares_with_the_object_before_it():
    after = {**BEFORE, "email": "ada@example.org", "blocked": True}
    row = envelope_row("user.updated", {"object": after}, T0, 1)
    for rules in ([BLOCKED, EMAIL], [EMAIL, BLOCKED]):
        engine = RuleEngine(
            rules,
            hours=WorkingHours(),
            catch_up_after_s=1e12,
            clock=lambda: T0.timestamp(),
            earlier=lambda _row, _data: dict(BEFORE),  # the store's earlier state of the object
        )
        fired = {a.write.rule_id for a in engine.feed([(1, [row])])}
        assert fired == {"blocked", "email-changed"}
