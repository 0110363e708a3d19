"""An alert's "why" reads as a person would say it: "20 users deleted in 55 s", not a tally of raw event types."""

from __future__ import annotations

import dataclasses

from helpers.stored_alerts import stored_alert
from tenant_events.alerts.presentation import counted, why
from tenant_events.values.alerts import StoredAlert


def burst(types: dict[str, int], first="2026-11-04T12:00:00.000Z", last_ms=1_793_793_655_000) -> StoredAlert:
    n = sum(types.values())
    return stored_alert(
        event_count=n,
        last_seq=n,
        first_time=first,
        last_time="2026-11-04T12:00:55.000Z",
        last_time_ms=last_ms,
        type_counts=types,
        detail="User ada deleted",
    )


def test_one_type_reads_as_a_sentence():
    assert why(burst({"user.deleted": 20})) == "20 users deleted in 55 s"


def test_several_types_say_the_total_then_each_in_words():
    text = why(burst({"user.deleted": 25, "organization.deleted": 4}))
    assert text == "29 events in 55 s: 25 users deleted, 4 organizations deleted"


def test_no_raw_type_names_and_no_zero_seconds():
    text = why(burst({"user.deleted": 3}, first="2026-11-04T12:00:55.000Z"))
    assert text == "3 users deleted in under a second"
    assert "user.deleted" not in text and "×" not in text


def test_counted_singular_plural_and_nested_types():
    assert counted("user.deleted", 1) == "1 user deleted"
    assert counted("organization.member.added", 3) == "3 organization members added"
    assert counted("group.role.assigned", 2) == "2 group roles assigned"
    assert counted("organization.connection.removed", 1) == "1 organization connection removed"
    assert counted("legacy", 2) == "2 legacy events"


def test_single_event_firings_folded_together_say_their_span_and_the_latest():
    quick = dataclasses.replace(
        burst({"group.role.assigned": 2}, first="2026-11-04T12:00:55.000Z"), occurrences=2
    )
    assert why(quick) == "in under a second; latest: User ada deleted"  # not "within under a second"
    slow = dataclasses.replace(burst({"group.role.assigned": 3}), occurrences=3)
    assert why(slow) == "in 55 s; latest: User ada deleted"
