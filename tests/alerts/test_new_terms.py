"""First seen for a combination of fields (Elastic's new terms): "the first time this client granted an admin role
in this organization in 30 days" — live, and after a restart, when the sightings are read back from the store."""

from __future__ import annotations

from helpers.alert_events import clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import Evaluator, RuleEngine, load_rules
from tenant_events.store import AlertInbox, Batch, StoreWriter

HOURS = WorkingHours(start="08:00", end="18:00", timezone="UTC")
RULE = {
    "id": "first-admin-grant",
    "name": "First admin grant by this client in this organization",
    "types": ["organization.member.role.assigned"],
    "conditions": [{"field": "object.role.name", "op": "contains", "value": "admin"}],
    "novelty": {"key": ["context.client.id", "object.organization.id"], "days": 30},
    "coalesce_minutes": 0,
}
A, B, C = ("cli_AAAA", "Provisioning"), ("cli_BBBB", "Backoffice"), ("cli_CCCC", "New Script")
X, Y = "org_XXXXXXXXXXXXXXXX", "org_YYYYYYYYYYYYYYYY"


def grant(hours: float, client, org: str, role: str = "Org Admin"):
    return event("organization.member.role.assigned", hours * 3600, client=client, org=org, role=role)


def _evaluator(clock):
    [rule] = load_rules([RULE], ()).rules
    return Evaluator(RuleEngine([rule], hours=HOURS, profile="demo", catch_up_after_s=300, clock=clock))


def test_each_new_combination_fires_once_in_its_period_across_a_restart(tmp_path):
    path = tmp_path / "demo.sqlite3"
    writer = StoreWriter(path)
    clock = clock_at(0)
    evaluator = _evaluator(clock)
    fired: list[str] = []

    def store(rows, hour):
        clock.now[0] = clock_at(hour * 3600 + 1)()
        writer.commit_sync(Batch(events=rows, cursor=f"c{hour}"))
        result = writer.run_alert_job(evaluator.step).result()
        fired.extend(a.detail for a in result.raised)
        return len(result.raised)

    try:
        assert store([grant(0, B, Y)], 0) == 0  # the first hour of history only learns
        assert store([grant(2, A, X)], 2) == 1  # a new combination
        assert store([grant(3, A, X)], 3) == 0  # seen two hours ago
        assert store([grant(3.5, A, X, role="viewer")], 3.5) == 0  # not an admin grant: not a sighting either
        assert store([grant(4, A, Y)], 4) == 1  # the same client, another organization
        assert store([grant(5, B, X)], 5) == 1  # another client, the same organization
        writer.close()
        writer = StoreWriter(path)  # a restart: the sightings are read back from the stored events
        evaluator = _evaluator(clock)
        assert store([grant(6, A, X), grant(6.1, B, Y)], 6) == 0
        # … so a combination never seen fires at once (without that history it would only be learning)
        assert store([grant(6.5, C, X)], 6.5) == 1
        assert store([grant(24 * 31, A, X)], 24 * 31) == 1  # 31 days later: new again
    finally:
        writer.close()
    with AlertInbox(path) as inbox:
        assert len(inbox.alerts()) == 5


def test_a_combination_is_checked_against_the_rules_types():
    bad = {**RULE, "novelty": {"key": ["context.client.id", "object.group.id"], "days": 30}}
    [error] = load_rules([bad], ()).errors
    assert "novelty.key: no event of the rule's types" in str(error) and "object.group.id" in str(error)
    [error] = load_rules([{**RULE, "novelty": {"key": [], "days": 30}}], ()).errors
    assert "a combination is 1 to 4 fields" in str(error)
