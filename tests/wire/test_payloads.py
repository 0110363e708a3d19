"""Summaries are built for every event type and never raise on odd payloads."""

from __future__ import annotations

import pytest

from tenant_events.wire import EventType, object_id, summarize

SAMPLES = {
    "user.created": {"user_id": "auth0|42", "email": "ada@example.com"},
    "group.member.added": {
        "group": {"id": "grp_1", "name": "Admins"},
        "member": {"member_type": "user", "id": "auth0|42"},
    },
    "group.role.deleted": {"group": {"id": "grp_1"}, "role": {"id": "rol_1"}},
    "organization.updated": {"id": "org_1", "display_name": "Acme"},
    "organization.member.role.assigned": {
        "organization": {"id": "org_1"},
        "user": {"user_id": "u"},
        "role": {"id": "r", "name": "Viewer"},
    },
    "organization.connection.removed": {
        "organization": {"id": "org_1", "name": "acme"},
        "connection": {"id": "con_1"},
    },
}


def test_summaries_name_the_object():
    assert (
        summarize(EventType.USER_CREATED, {"object": SAMPLES["user.created"]})
        == "User ada@example.com created"
    )
    assert (
        summarize(EventType.GROUP_MEMBER_ADDED, {"object": SAMPLES["group.member.added"]})
        == "user auth0|42 added to group Admins"
    )
    assert "Viewer" in summarize(
        EventType.ORGANIZATION_MEMBER_ROLE_ASSIGNED, {"object": SAMPLES["organization.member.role.assigned"]}
    )
    assert object_id(EventType.USER_CREATED, {"object": SAMPLES["user.created"]}) == "auth0|42"
    assert (
        object_id(
            EventType.ORGANIZATION_CONNECTION_REMOVED, {"object": SAMPLES["organization.connection.removed"]}
        )
        == "org_1"
    )


@pytest.mark.parametrize("event_type", list(EventType))
@pytest.mark.parametrize(
    "data", [{}, {"object": None}, {"object": {}}, {"object": {"id": 5}}, {"object": {"user": "x"}}]
)
def test_summaries_tolerate_odd_payloads(event_type, data):
    text = summarize(event_type, data)
    assert event_type.value in text or text
    assert isinstance(text, str) and text
