"""The built-in detection pack: every rule explained, with a severity and MITRE ATT&CK ids, and its shipped
fixtures — events that must fire it and events that must not — pass through the real evaluator."""

from __future__ import annotations

import pytest

from tenant_events.alerts import BUILTIN_RULES
from tenant_events.alerts.fixtures import run_fixture

PACK = [
    r for r in BUILTIN_RULES if r.id != "event-types"
]  # "every event of chosen types" is a switch, not a detection
CASES = [(rule, test) for rule in PACK for test in rule.tests]


def test_the_pack_holds_the_detections_each_explained_with_fixtures_both_ways():
    ids = {r.id for r in PACK}
    assert {
        "admin-role",
        "admin-group-member",
        "temporary-elevation",
        "mass-deletion-by-actor",
        "org-connection",
        "admin-group-deleted",
        "org-deleted",
        "signup-wave",
        "shared-phone",
        "account-linked",
        "new-privileged-actor",
        "off-hours",
    } <= ids
    for rule in PACK:
        assert rule.explanation.endswith(".") and rule.mitre, rule.id
        assert {t.expect for t in rule.tests} == {"fires", "quiet"}, rule.id
    by_id = {r.id: r for r in PACK}
    assert by_id["temporary-elevation"].severity == by_id["mass-deletion-by-actor"].severity == "critical"
    assert by_id["account-linked"].severity == by_id["new-privileged-actor"].severity == "warning"


@pytest.mark.parametrize(("rule", "test"), CASES, ids=[f"{r.id}: {t.name}" for r, t in CASES])
def test_each_builtin_fixture(rule, test, tmp_path):
    result = run_fixture(rule, test, scratch=tmp_path)
    assert result.passed, result.line()


def test_a_fixture_run_can_fail(tmp_path):
    """The runner is not a rubber stamp: the mass-deletion rule's firing fixture, expected quiet, fails."""
    rule = next(r for r in PACK if r.id == "mass-deletion")
    fires = next(t for t in rule.tests if t.expect == "fires")
    result = run_fixture(rule, fires.model_copy(update={"expect": "quiet"}), scratch=tmp_path)
    assert not result.passed and result.line().startswith("FAIL mass-deletion: ")
