"""Sequences by event time at their edges: exactly at T, delivered out of order, the second step before the
first (ordered and in any order), events used once; and per-group sequences through the rule engine."""

from __future__ import annotations

import pytest

from helpers.alert_events import clock_at, event
from tenant_events.alert_settings import WorkingHours
from tenant_events.alerts import RuleEngine, load_rules
from tenant_events.alerts.sequences import SequenceWindow
from tenant_events.store import EvalRow

A, B = frozenset({0}), frozenset({1})


def ev(seq: int, ms: int) -> EvalRow:
    return EvalRow(seq, f"evt_{seq:016d}", "group.role.assigned", "", ms, "demo", None, None)


def test_b_within_t_after_a_fires_with_both():
    w = SequenceWindow(2, 60_000, ordered=True)
    assert w.offer(ev(1, 0), A) is None
    assert [e.seq for e in w.offer(ev(2, 59_999), B)] == [1, 2]


def test_exactly_t_apart_is_not_within_t():
    w = SequenceWindow(2, 60_000, ordered=True)
    w.offer(ev(1, 0), A)
    assert w.offer(ev(2, 60_000), B) is None


@pytest.mark.parametrize(("ordered", "fires"), [(True, False), (False, True)])
def test_the_second_step_happening_before_the_first(ordered, fires):
    w = SequenceWindow(2, 60_000, ordered=ordered)
    w.offer(ev(1, 10_000), B)  # removed at 10 s …
    assert (w.offer(ev(2, 20_000), A) is not None) is fires  # … assigned at 20 s


def test_delivered_out_of_order_but_in_order_by_event_time():
    w = SequenceWindow(2, 60_000, ordered=True)
    assert w.offer(ev(1, 30_000), B) is None  # B delivered first, but happened after A
    assert [e.seq for e in w.offer(ev(2, 5_000), A)] == [2, 1]


def test_each_event_belongs_to_one_firing():
    w = SequenceWindow(2, 60_000, ordered=True)
    w.offer(ev(1, 0), A)
    assert w.offer(ev(2, 1000), B) is not None
    assert w.offer(ev(3, 2000), B) is None  # A was used up by the first firing
    assert [e.seq for e in w.offer(ev(4, 3000), A) or []] == []  # A after the B: not in order


ELEVATION = {
    "id": "elevation",
    "name": "Temporary elevation",
    "severity": "critical",
    "types": ["organization.member.role.assigned", "organization.member.role.deleted"],
    "group_by": ["object.user.user_id"],
    "sequence": {
        "steps": [
            {
                "types": ["organization.member.role.assigned"],
                "conditions": [{"field": "object.role.name", "op": "contains", "value": "admin"}],
            },
            {
                "types": ["organization.member.role.deleted"],
                "conditions": [{"field": "object.role.name", "op": "contains", "value": "admin"}],
            },
        ],
        "within_seconds": 3600,
    },
}


def segments(rows):
    """Rows as the store hands them to the engine (EventRow's columns, then the seq)."""
    return [(None, [(*r[:11], i + 1) for i, r in enumerate(rows)])]


def test_a_sequence_counts_per_group_and_names_it():
    [rule] = load_rules([ELEVATION], ()).rules
    engine = RuleEngine([rule], hours=WorkingHours(), clock=clock_at(3600), catch_up_after_s=86_400)  # live
    rows = [
        event("organization.member.role.assigned", 0, user="auth0|aaaa", role="Org Admin"),
        event("organization.member.role.deleted", 60, user="auth0|bbbb", role="Org Admin"),  # another member
        event("organization.member.role.deleted", 3599, user="auth0|aaaa", role="Org Admin"),
    ]
    [alert] = engine.feed(segments(rows))
    assert alert.write.rule_name == "Temporary elevation · user auth0|aaaa"
    assert alert.write.event_count == 2 and alert.write.first_seq == 1 and alert.write.last_seq == 3
