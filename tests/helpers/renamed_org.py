"""A small tenant with an organization renamed after some of its events, for the tests of names at the time:

    T0 + 0 s   organization Initech created; user grace@example.com created
    T0 + 2 s   Grace added to Initech; + 3 s made admin of it
    T0 + 60 s  Initech renamed Globex
    T0 + 120 s Grace removed from Globex

The table says the first events with "Initech" and the last with "Globex"; so must every other view.
"""

from __future__ import annotations

from pathlib import Path

from helpers.entity_events import Tenant
from tenant_events.store import Batch, StoreWriter

ORG, GRACE, ADMIN = "org_initech0000001", "auth0|grace0000000001", "rol_admin0001"
# (type, the table's sentence) of each event, oldest first
SAID = [
    ("organization.created", "organization Initech created"),
    ("user.created", "user grace@example.com created"),
    ("organization.member.added", "grace@example.com added to organization Initech"),
    ("organization.member.role.assigned", "grace@example.com added to organization Initech as admin"),
    ("organization.updated", "organization Globex updated"),
    ("organization.member.deleted", "grace@example.com removed from organization Globex"),
]


def write_renamed_org(path: Path) -> None:
    """The story into a tenant database, its directory indexed."""
    t = Tenant()
    org = {"id": ORG, "name": "initech"}  # (what a member event carries of its organization)
    grace = {"user_id": GRACE}
    rows = [
        t.row("organization.created", t.org(ORG, "initech", "Initech"), at=0),
        t.row("user.created", t.user(GRACE, "grace@example.com", "Grace Hopper"), at=1),
        t.row("organization.member.added", {"organization": org, "user": grace}, at=2),
        t.row(
            "organization.member.role.assigned",
            {"organization": org, "user": grace, "role": t.role(ADMIN, "admin")},
            at=3,
        ),
        t.row("organization.updated", t.org(ORG, "globex", "Globex"), at=60),
        t.row(
            "organization.member.deleted",
            {"organization": {"id": ORG, "name": "globex"}, "user": grace},
            at=120,
        ),
    ]
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=rows, cursor="c1"))
        writer.index_all_sync()
    finally:
        writer.close()
