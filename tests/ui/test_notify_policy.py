"""The notification policy: chosen types only, bursts coalesce, backlog gives one summary, DND and pause."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tenant_events.notifications.policy import DEFAULT_TYPES, Candidate, NotifyPolicy

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def ev(i: int, type_: str = "user.deleted", age_s: float = 1.0) -> Candidate:
    when = (NOW - timedelta(seconds=age_s)).isoformat().replace("+00:00", "Z")
    return Candidate("acme", i, f"evt_{i:016d}", type_, when, f"user{i}@example.com")


def policy(**kw) -> NotifyPolicy:
    return NotifyPolicy(clock=lambda: NOW.timestamp(), **kw)


def test_defaults_are_deletions_and_role_changes():
    assert "user.deleted" in DEFAULT_TYPES
    assert "organization.member.role.assigned" in DEFAULT_TYPES
    assert "user.created" not in DEFAULT_TYPES
    assert "user.updated" not in DEFAULT_TYPES


def test_single_event_notifies_with_its_target():
    p = policy()
    assert p.offer([ev(1)]) is True
    [out] = p.flush()
    assert out.target is not None and out.target.event_id == "evt_0000000000000001"
    assert out.title == "user.deleted"
    assert p.flush() == []


def test_unchosen_types_are_ignored():
    p = policy()
    assert p.offer([ev(1, "user.created")]) is False
    assert p.flush() == []


def test_burst_of_one_type_coalesces_into_one_notification():
    p = policy(types={"user.created"})
    p.offer([ev(i, "user.created") for i in range(23)])
    [out] = p.flush()
    assert out.title.startswith("23 × user.created in ")
    assert out.target is not None and out.target.seq == 22


def test_mixed_burst_gives_a_tally():
    p = policy()
    p.offer([ev(1), ev(2), ev(3, "group.deleted")])
    [out] = p.flush()
    assert out.title.startswith("3 events in")
    assert "2 × user.deleted" in out.body and "1 × group.deleted" in out.body


def test_backlog_after_sleep_gives_one_summary_not_a_flood():
    p = policy()
    p.offer([ev(i, age_s=3600) for i in range(120)])
    outs = p.flush()
    assert len(outs) == 1
    assert outs[0].title == "Caught up: 120 events while away"
    assert outs[0].target is None


def test_do_not_disturb_and_pause_suppress():
    p = policy(dnd_until=NOW.timestamp() + 3600)
    assert p.offer([ev(1)]) is False
    assert p.flush() == []
    p = policy(paused=True)
    assert p.offer([ev(1)]) is False
    assert p.flush() == []
    p = policy(dnd_until=NOW.timestamp() - 1)  # expired DND notifies again
    assert p.offer([ev(1)]) is True
