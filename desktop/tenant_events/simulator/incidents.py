"""Incidents the built-in detections look for, acted out on the tenant's world (scenarios.py plays them): each
returns the events to emit, in order, as (type, data.object) pairs; the world is changed as the events say.

    temporary_elevation   an admin role assigned to an organization member, then removed again
    admin_group_member    an admin role given to a group, then a user added to that group
    admin_group_deleted   an admin role given to a group, then the group deleted
    signup_wave           users created with addresses at a throwaway domain
    shared_phone          users created with one phone number
    account_link          a user signs up, then its identities gain one from another connection
    org_renames           every organization takes another division's name (a reorganisation): each event that
                          named one before reads its old name
"""

from __future__ import annotations

import string
from typing import Any, Final

from tenant_events.simulator.generator import TenantLife, _division
from tenant_events.simulator.world import ADMIN_ROLE_NAMES

Events = list[tuple[str, dict[str, Any]]]
THROWAWAY_DOMAIN: Final = "mailinator.com"
SHARED_PHONE: Final = "+15550100199"


def _admin_role(life: TenantLife) -> str:
    return next(rid for rid, name in life.roles if name in ADMIN_ROLE_NAMES)


def temporary_elevation(life: TenantLife, now: str) -> Events:
    made = life._make_possible("organization.member.role.assigned", now)
    org = life._any_org()
    assert org is not None
    user_id = org.members.pick(life.rng) or life._user_outside(org.members)
    assert user_id is not None
    if user_id not in org.members:
        org.members.add(user_id)
        life.user_orgs.setdefault(user_id, set()).add(org.id)
        made.append(
            ("organization.member.added", {"organization": life._org_ref(org), "user": {"user_id": user_id}})
        )
    role = life._role(_admin_role(life))
    ref = {"organization": life._org_ref(org, with_name=False), "user": {"user_id": user_id}, "role": role}
    return [
        *made,
        ("organization.member.role.assigned", ref),
        ("organization.member.role.deleted", dict(ref)),
    ]


def _admin_group(life: TenantLife, now: str) -> tuple[Any, Events]:
    group = life._any_group()
    made: Events = []
    if group is None:
        made.append(("group.created", life._group_created(now, kind="tenant")))
        group = life._any_group()
    assert group is not None
    role_id = _admin_role(life)
    group.roles.add(role_id)
    return group, [
        *made,
        (
            "group.role.assigned",
            {"group": life._group_ref(group), "role": life._role(role_id), "created_at": now},
        ),
    ]


def admin_group_member(life: TenantLife, now: str) -> Events:
    group, events = _admin_group(life, now)
    user_id = life._user_outside(group.members)
    if user_id is None:
        created = life._user_created(now)
        user_id = created["user_id"]
        events.append(("user.created", created))
    group.members.add(user_id)
    life.user_groups.setdefault(user_id, set()).add(group.id)
    return [
        *events,
        (
            "group.member.added",
            {"group": life._group_ref(group), "member": {"member_type": "user", "id": user_id}},
        ),
    ]


def admin_group_deleted(life: TenantLife, now: str) -> Events:
    spare = ("group.created", life._group_created(now, kind="tenant"))  # never the last group
    group, events = _admin_group(life, now)
    life._drop_group(group)
    return [spare, *events, ("group.deleted", life._group_obj(group, now))]


def signup_wave(life: TenantLife, now: str) -> Events:
    user = life._user_created(now)
    user["email"] = f"{user['email'].split('@')[0]}@{THROWAWAY_DOMAIN}"
    user["email_verified"] = False
    life.users[user["user_id"]] = dict(user)
    return [("user.created", user)]


def shared_phone(life: TenantLife, now: str) -> Events:
    user = life._user_created(now)
    user["phone_number"] = SHARED_PHONE
    life.users[user["user_id"]] = dict(user)
    return [("user.created", user)]


def account_link(life: TenantLife, now: str) -> Events:
    """A user signs up, then gets an identity from another connection linked (so the update can be compared with
    the sign-up): a Google account, or for a user who signed up with Google, a database password."""
    created = life._user_created(now)
    user = life.users[created["user_id"]]
    digits = f"10{life._chars(18, '0123456789')}"
    if created["identities"][0]["provider"] == "google-oauth2":
        linked = {
            "connection": "Username-Password-Authentication",
            "provider": "auth0",
            "user_id": digits,
            "isSocial": False,
        }
    else:
        linked = {
            "connection": "google-oauth2",
            "provider": "google-oauth2",
            "user_id": digits,
            "isSocial": True,
        }
    user["identities"] = [*user.get("identities", []), linked]
    user["updated_at"] = now
    return [("user.created", created), ("user.updated", dict(user))]


def org_renames(life: TenantLife, now: str) -> Events:
    """Every organization renamed at once, as `organization.updated` events (the routine rename of the generator,
    for all of them)."""
    out: Events = []
    for org in list(life.orgs.values()):
        company, _, division = org.display_name.partition(" ")
        org.display_name = f"{company} {_division(life._chars(3, string.digits), not_this=division)}"
        out.append(("organization.updated", life._org_object(org)))
    return out


INCIDENTS: Final = {
    "temporary_elevation": temporary_elevation,
    "admin_group_member": admin_group_member,
    "admin_group_deleted": admin_group_deleted,
    "signup_wave": signup_wave,
    "shared_phone": shared_phone,
    "account_link": account_link,
    "org_renames": org_renames,
}
