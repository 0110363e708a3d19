"""The default event types that notify (the opt-in per-type rule, the tray's and the settings' ticks)."""

from __future__ import annotations

from tenant_events.wire.event_types import DEFAULT_NOTIFY_NAMES, DEFAULT_NOTIFY_TYPES


def test_defaults_are_deletions_and_role_changes():
    assert "user.deleted" in DEFAULT_NOTIFY_NAMES
    assert "organization.member.role.assigned" in DEFAULT_NOTIFY_NAMES
    assert "user.created" not in DEFAULT_NOTIFY_NAMES
    assert "user.updated" not in DEFAULT_NOTIFY_NAMES
    assert {t.value for t in DEFAULT_NOTIFY_TYPES} == DEFAULT_NOTIFY_NAMES
