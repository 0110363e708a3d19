"""Typed, tolerant views of `data.object` for the 22 event types, used to say who/what an event is about.

The contract does not show the fields inside `data`; these follow the real service's (docs/event-stream.md "Payloads").
Every view ignores fields it does not know and treats all but the identifying ones as optional, so a payload
that grows never breaks display. A payload that does not fit at all still gets a generic summary.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from tenant_events.server_text import shown
from tenant_events.wire.event_types import EventType


class _View(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, coerce_numbers_to_str=True)


class UserObject(_View):
    user_id: str
    email: str | None = None
    username: str | None = None
    name: str | None = None
    nickname: str | None = None
    phone_number: str | None = None
    blocked: bool | None = None

    @property
    def label(self) -> str:
        return self.email or self.username or self.name or self.nickname or self.phone_number or self.user_id


class OrganizationRef(_View):
    id: str
    name: str | None = None
    display_name: str | None = None

    @property
    def label(self) -> str:
        return self.display_name or self.name or self.id


class GroupRef(_View):
    id: str
    name: str | None = None
    type: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.id


class RoleRef(_View):
    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.id


class UserRef(_View):
    user_id: str


class ConnectionRef(_View):
    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.id


class MemberRef(_View):
    id: str
    member_type: str | None = None


class GroupMemberObject(_View):
    group: GroupRef
    member: MemberRef


class GroupRoleObject(_View):
    group: GroupRef
    role: RoleRef


class OrgMemberObject(_View):
    organization: OrganizationRef
    user: UserRef


class OrgMemberRoleObject(_View):
    organization: OrganizationRef
    user: UserRef
    role: RoleRef


class OrgGroupRoleObject(_View):
    organization: OrganizationRef
    group: GroupRef
    role: RoleRef


class OrgConnectionObject(_View):
    organization: OrganizationRef
    connection: ConnectionRef


_VERB = {
    "created": "created",
    "updated": "updated",
    "deleted": "deleted",
    "added": "added",
    "removed": "removed",
    "assigned": "assigned",
}


def _verb(event_type: EventType) -> str:
    return _VERB.get(event_type.value.rsplit(".", 1)[1], event_type.value.rsplit(".", 1)[1])


def _summary(event_type: EventType, obj: dict[str, Any]) -> str:
    t = event_type.value
    verb = _verb(event_type)
    if t.startswith("user."):
        return f"User {UserObject.model_validate(obj).label} {verb}"
    if t in ("group.created", "group.updated", "group.deleted"):
        return f"Group {GroupRef.model_validate(obj).label} {verb}"
    if t.startswith("group.member."):
        gm = GroupMemberObject.model_validate(obj)
        prep = "to" if verb == "added" else "from"
        return f"{gm.member.member_type or 'member'} {gm.member.id} {verb} {prep} group {gm.group.label}"
    if t.startswith("group.role."):
        gr = GroupRoleObject.model_validate(obj)
        prep = "to" if verb == "assigned" else "from"
        return f"Role {gr.role.label} {verb} {prep} group {gr.group.label}"
    if t in ("organization.created", "organization.updated", "organization.deleted"):
        return f"Organization {OrganizationRef.model_validate(obj).label} {verb}"
    if t.startswith("organization.member.role."):
        mr = OrgMemberRoleObject.model_validate(obj)
        prep = "to" if verb == "assigned" else "from"
        return f"Role {mr.role.label} {verb} {prep} {mr.user.user_id} in {mr.organization.label}"
    if t.startswith("organization.member."):
        om = OrgMemberObject.model_validate(obj)
        prep = "to" if verb == "added" else "from"
        return f"{om.user.user_id} {verb} {prep} organization {om.organization.label}"
    if t.startswith("organization.group.role."):
        ogr = OrgGroupRoleObject.model_validate(obj)
        prep = "to" if verb == "assigned" else "from"
        return f"Role {ogr.role.label} {verb} {prep} group {ogr.group.label} in {ogr.organization.label}"
    if t.startswith("organization.connection."):
        oc = OrgConnectionObject.model_validate(obj)
        prep = {"added": "to", "removed": "from"}.get(verb, "in")
        return f"Connection {oc.connection.label} {verb} {prep} {oc.organization.label}"
    return t  # pragma: no cover - every EventType is handled above


def summarize(event_type: EventType, data: dict[str, Any]) -> str:
    """A one-line who/what for the table and notifications; never raises on odd payloads. It quotes the tenant's
    fields (names, emails), so control characters are escaped (server_text.py): one line, whatever they hold."""
    obj = data.get("object")
    if not isinstance(obj, dict):
        return f"{event_type.value} (no object in data)"
    try:
        return shown(_summary(event_type, obj), None)
    except ValidationError:
        ident = obj.get("id") or obj.get("user_id")
        return shown(f"{event_type.value} {ident}", None) if isinstance(ident, str) else event_type.value


def object_id(event_type: EventType, data: dict[str, Any]) -> str | None:
    """The id of the main object the event is about, for dashboard links; None when absent."""
    obj = data.get("object")
    if not isinstance(obj, dict):
        return None
    if event_type.family == "user":
        value = obj.get("user_id")
    elif event_type.value.count(".") == 1:
        value = obj.get("id")
    else:
        parent = obj.get(event_type.family)
        value = parent.get("id") if isinstance(parent, dict) else None
    return value if isinstance(value, str) else None
