"""The fixtures that ship with the built-in detection pack: for each rule, events that must fire it and events
that must not (`tenant-events rules test`, fixtures.py runs them). Times are seconds after a Wednesday noon UTC,
with working hours 08:00–18:00 UTC on weekdays; payloads are shaped like the real service's.
"""

from __future__ import annotations

from typing import Any, Final

_ORG: Final = {"id": "org_fixtureAcme0001", "name": "acme", "display_name": "Acme"}
_GROUP: Final = {"id": "grp_fixtureAdmins01", "name": "admins", "type": "tenant"}
_ADMIN: Final = {"id": "rol_fixtureAdmin001", "name": "Org Admin"}
_VIEWER: Final = {"id": "rol_fixtureViewer01", "name": "viewer"}


def _ctx(client: str = "cli_routine", ip: str = "198.51.100.7") -> dict[str, Any]:
    return {"client": {"id": client, "name": client.replace("_", " ").title()}, "request": {"ip": ip}}


def _ev(type_: str, at: float, obj: dict[str, Any], **ctx: str) -> dict[str, Any]:
    return {"type": type_, "at": at, "data": {"object": obj, "context": _ctx(**ctx)}}


def _user(
    n: int,
    *,
    email: str | None = None,
    phone: str | None = None,
    links: int = 1,
    verified: bool | None = None,
) -> dict[str, Any]:
    user: dict[str, Any] = {
        "user_id": f"auth0|fixture{n:04d}",
        "email": email or f"user{n}@example.com",
        "identities": [
            {
                "connection": "Username-Password-Authentication",
                "user_id": f"fixture{n:04d}",
                "provider": "auth0",
            }
        ],
    }
    if verified is not None:
        user["email_verified"] = verified
    if links > 1:
        user["identities"].append(
            {"connection": "google-oauth2", "user_id": f"g{n}", "provider": "google-oauth2"}
        )
    if phone:
        user["phone_number"] = phone
    return user


def _signup(n: int, every: float, email: str, *, verified: bool) -> dict[str, Any]:
    return _ev("user.created", n * every, _user(n, email=email, verified=verified))


def _deletions(n: int, every: float, **ctx: str) -> list[dict[str, Any]]:
    return [_ev("user.deleted", i * every, _user(i), **ctx) for i in range(n)]


def _member_role(type_: str, at: float, role: dict[str, str], user: int = 1) -> dict[str, Any]:
    return _ev(
        type_,
        at,
        {"organization": {"id": _ORG["id"]}, "user": {"user_id": f"auth0|fixture{user:04d}"}, "role": role},
    )


def _group_role(type_: str, at: float, role: dict[str, str], **ctx: str) -> dict[str, Any]:
    return _ev(type_, at, {"group": {"id": _GROUP["id"], "type": "tenant"}, "role": role}, **ctx)


def _case(name: str, expect: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": name, "expect": expect, "events": events}


_ADMIN_GROUP = [_ev("group.created", 0, dict(_GROUP)), _group_role("group.role.assigned", 5, _ADMIN)]
_MEMBER_ADDED = _ev(
    "group.member.added",
    60,
    {"group": {"id": _GROUP["id"]}, "member": {"member_type": "user", "id": "auth0|fixture0001"}},
)
_CONNECTION = {
    "organization": {"id": _ORG["id"]},
    "connection": {"id": "con_fixtureSaml0001", "name": "acme-saml"},
}

FIXTURES: Final[dict[str, list[dict[str, Any]]]] = {
    "mass-deletion": [
        _case("20 users deleted in 57 s", "fires", _deletions(20, 3.0)),
        _case("19 users deleted in a minute", "quiet", _deletions(19, 3.0)),
        _case("20 deleted, but 20 s apart", "quiet", _deletions(20, 20.0)),
    ],
    "mass-deletion-by-actor": [
        _case(
            "12 users deleted by one client in 9 min",
            "fires",
            _deletions(12, 45.0, client="cli_backoffice_script"),
        ),
        _case(
            "12 users deleted by 12 different clients",
            "quiet",
            [_ev("user.deleted", i * 45.0, _user(i), client=f"cli_admin_{i}") for i in range(12)],
        ),
        _case("9 users deleted by one client", "quiet", _deletions(9, 45.0, client="cli_backoffice_script")),
    ],
    "admin-role": [
        _case(
            "Org Admin assigned to a member",
            "fires",
            [_member_role("organization.member.role.assigned", 0, _ADMIN)],
        ),
        _case(
            "viewer assigned to a member",
            "quiet",
            [_member_role("organization.member.role.assigned", 0, _VIEWER)],
        ),
    ],
    "admin-group-member": [
        _case("a user added to a group that holds Org Admin", "fires", [*_ADMIN_GROUP, _MEMBER_ADDED]),
        _case(
            "a user added to a group that holds viewer",
            "quiet",
            [
                _ev("group.created", 0, dict(_GROUP)),
                _group_role("group.role.assigned", 5, _VIEWER),
                _MEMBER_ADDED,
            ],
        ),
        _case(
            "the admin role was removed from the group first",
            "quiet",
            [*_ADMIN_GROUP, _group_role("group.role.deleted", 30, _ADMIN), _MEMBER_ADDED],
        ),
    ],
    "temporary-elevation": [
        _case(
            "Org Admin assigned and removed 40 min later",
            "fires",
            [
                _member_role("organization.member.role.assigned", 0, _ADMIN),
                _member_role("organization.member.role.deleted", 2400, _ADMIN),
            ],
        ),
        _case(
            "Org Admin given to a group, removed (by role id only) 10 min later",
            "fires",
            [
                _group_role("group.role.assigned", 0, _ADMIN),
                _group_role("group.role.deleted", 600, {"id": _ADMIN["id"]}),
            ],
        ),
        _case(
            "removed exactly an hour later",
            "quiet",
            [
                _member_role("organization.member.role.assigned", 0, _ADMIN),
                _member_role("organization.member.role.deleted", 3600, _ADMIN),
            ],
        ),
        _case(
            "assigned to one member, removed from another",
            "quiet",
            [
                _member_role("organization.member.role.assigned", 0, _ADMIN),
                _member_role("organization.member.role.deleted", 60, _ADMIN, user=2),
            ],
        ),
        _case(
            "viewer assigned and removed",
            "quiet",
            [
                _member_role("organization.member.role.assigned", 0, _VIEWER),
                _member_role("organization.member.role.deleted", 60, _VIEWER),
            ],
        ),
    ],
    "org-connection": [
        _case(
            "a SAML connection added to an organization",
            "fires",
            [_ev("organization.connection.added", 0, _CONNECTION)],
        ),
        _case(
            "a connection's settings updated",
            "quiet",
            [_ev("organization.connection.updated", 0, _CONNECTION)],
        ),
        _case(
            "a new organization set up: its connection added 10 minutes after it was created",
            "quiet",
            [
                _ev("organization.created", 0, dict(_ORG)),
                _ev("organization.connection.added", 600, _CONNECTION),
            ],
        ),
    ],
    "org-connection-onboarding": [
        _case(
            "a connection added 10 minutes after its organization was created",
            "fires",
            [
                _ev("organization.created", 0, dict(_ORG)),
                _ev("organization.connection.added", 600, _CONNECTION),
            ],
        ),
        _case(
            "a connection added an hour after its organization was created",
            "quiet",
            [
                _ev("organization.created", 0, dict(_ORG)),
                _ev("organization.connection.added", 3600, _CONNECTION),
            ],
        ),
    ],
    "org-deleted": [
        _case("an organization deleted", "fires", [_ev("organization.deleted", 0, dict(_ORG))]),
        _case("an organization updated", "quiet", [_ev("organization.updated", 0, dict(_ORG))]),
    ],
    "admin-group-deleted": [
        _case(
            "a group holding Org Admin deleted",
            "fires",
            [*_ADMIN_GROUP, _ev("group.deleted", 60, dict(_GROUP))],
        ),
        _case(
            "a group holding only viewer deleted",
            "quiet",
            [
                _ev("group.created", 0, dict(_GROUP)),
                _group_role("group.role.assigned", 5, _VIEWER),
                _ev("group.deleted", 60, dict(_GROUP)),
            ],
        ),
    ],
    "signup-burst": [
        _case("60 sign-ups in 59 s", "fires", [_ev("user.created", i * 1.0, _user(i)) for i in range(60)]),
        _case(
            "40 sign-ups a minute for 3 minutes",
            "quiet",
            [_ev("user.created", i * 1.5, _user(i)) for i in range(120)],
        ),
    ],
    "signup-wave": [
        _case(
            "20 verified accounts at mailinator.com in 4 min",
            "fires",
            [_signup(i, 12.0, f"x{i}@mailinator.com", verified=True) for i in range(20)],
        ),
        _case(
            "20 unverified accounts at example.com in 4 min",
            "fires",
            [_signup(i, 12.0, f"user{i}@example.com", verified=False) for i in range(20)],
        ),
        _case(
            "10 unverified and 10 at yopmail.com in 4 min",
            "fires",
            [
                _signup(i, 12.0, f"u{i}@yopmail.com" if i % 2 else f"u{i}@example.com", verified=i % 2 == 1)
                for i in range(20)
            ],
        ),
        _case(
            "19 unverified accounts at mailinator.com in 4 min",
            "quiet",
            [_signup(i, 12.0, f"x{i}@mailinator.com", verified=False) for i in range(19)],
        ),
        _case(
            "20 unverified at mailinator.com, but over 6 min",
            "quiet",
            [_signup(i, 19.0, f"x{i}@mailinator.com", verified=False) for i in range(20)],
        ),
        _case(
            "60 verified accounts at example.com in 4 min",
            "quiet",
            [_signup(i, 4.0, f"user{i}@example.com", verified=True) for i in range(60)],
        ),
    ],
    "shared-phone": [
        _case(
            "one phone number on 3 users within a day",
            "fires",
            [_ev("user.created", i * 3600.0, _user(i, phone="+15550100")) for i in range(3)],
        ),
        _case(
            "one user's phone number updated 3 times",
            "quiet",
            [_ev("user.updated", i * 60.0, _user(1, phone="+15550100")) for i in range(3)],
        ),
        _case(
            "3 users, 3 phone numbers",
            "quiet",
            [_ev("user.created", i * 60.0, _user(i, phone=f"+1555010{i}")) for i in range(3)],
        ),
    ],
    "account-linked": [
        _case(
            "a user gains a google-oauth2 identity",
            "fires",
            [_ev("user.created", 0, _user(1)), _ev("user.updated", 60, _user(1, links=2))],
        ),
        _case(
            "a user updated, identities unchanged",
            "quiet",
            [_ev("user.created", 0, _user(1, links=2)), _ev("user.updated", 60, _user(1, links=2))],
        ),
    ],
    "new-privileged-actor": [
        _case(
            "a client never seen before assigns a role",
            "fires",
            [
                _group_role("group.role.assigned", 0, _VIEWER, client="cli_known"),
                _group_role("group.role.assigned", 4000, _VIEWER, client="cli_new"),
            ],
        ),
        _case(
            "the usual client assigns a role",
            "quiet",
            [
                _group_role("group.role.assigned", 0, _VIEWER, client="cli_known"),
                _group_role("group.role.assigned", 4000, _VIEWER, client="cli_known"),
            ],
        ),
    ],
    "off-hours": [
        _case("a group updated at 22:00", "fires", [_ev("group.updated", 10 * 3600, dict(_GROUP))]),
        _case("a group updated at noon", "quiet", [_ev("group.updated", 0, dict(_GROUP))]),
    ],
}
