"""A small tenant whose access at each moment is known by hand, for the access review's command, view and report
tests: Grace is admin of Stark until she leaves it, Ken is admin through his group, connections come and go, and
the stream lost its cursor once (a possible gap) between the two halves.

    T0 +   0 s .. + 8 s   Grace, Ken, Stark (display "Stark Industries"), group hr of Stark; Grace joins Stark
                          and is made admin (by Backoffice Script from 203.0.113.7); connection acme-saml added;
                          Ken joins hr; hr is given admin in Stark
    — possible gap: the cursor expired, resumed from T0 + 90 s —
    T0 + 100 s .. + 104 s Grace leaves Stark (so her admin role ends), hr is given the tenant role viewer,
                          acme-saml is removed from Stark, Ada signs up (no access), and Linus loses the role
                          auditor in Stark: given before the first stored event (only its removal is stored)
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from helpers.entity_events import T0, Tenant, envelope_row, simulated_rows
from tenant_events.store import Batch, EventRow, GapMarker, StoreWriter

GRACE, KEN, ADA = "auth0|grace0000000001", "auth0|ken00000000000002", "auth0|ada00000000000003"
LINUS, AUDITOR = "auth0|linus000000000004", "rol_auditor01"
STARK, HR, ADMIN, VIEWER, SAML = (
    "org_stark000000001",
    "grp_hr00000000001",
    "rol_admin0001",
    "rol_viewer001",
    "con_saml001",
)
BACKOFFICE = {"client": {"id": "cli_backoffice", "name": "Backoffice Script", "metadata": {}},
              "request": {"ip": "203.0.113.7", "method": "POST", "hostname": "demo.example.test"}}  # fmt: skip
BEFORE = T0 + timedelta(seconds=50)  # between the two halves
AFTER = T0 + timedelta(seconds=200)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rows(
    story: list[tuple[float, str, dict[str, Any], dict[str, Any] | None]], first_n: int
) -> list[EventRow]:
    return [
        envelope_row(kind, {"object": obj, **({"context": ctx} if ctx else {})}, at(seconds), first_n + k)
        for k, (seconds, kind, obj, ctx) in enumerate(story)
    ]


def story_rows() -> tuple[list[EventRow], list[EventRow]]:
    """The two halves of the story, as stored rows."""
    t = Tenant()
    stark, grace = {"id": STARK, "name": "stark"}, {"user_id": GRACE}
    hr = t.group(HR, "hr", "organization", STARK)
    saml = {"id": SAML, "name": "acme-saml"}
    first = [
        (0, "user.created", t.user(GRACE, "grace@example.com", "Grace Hopper"), None),
        (1, "user.created", t.user(KEN, "ken@example.com", "Ken Thompson"), None),
        (2, "organization.created", t.org(STARK, "stark", "Stark Industries"), None),
        (3, "organization.member.added", {"organization": stark, "user": grace}, BACKOFFICE),
        (4, "organization.member.role.assigned", {"organization": stark, "user": grace,
                                                  "role": t.role(ADMIN, "admin")}, BACKOFFICE),
        (5, "organization.connection.added", {"organization": stark, "connection": saml}, None),
        (6, "group.created", hr, None),
        (7, "group.member.added", {"group": hr, "member": {"member_type": "user", "id": KEN}}, None),
        (8, "organization.group.role.assigned", {"organization": stark, "group": hr,
                                                 "role": t.role(ADMIN, "admin"), "created_at": iso(at(8))}, None),
    ]  # fmt: skip
    second = [
        (100, "organization.member.deleted", {"organization": stark, "user": grace}, BACKOFFICE),
        (101, "group.role.assigned", {"group": hr, "role": t.role(VIEWER, "viewer"), "created_at": iso(at(101))}, None),
        (102, "organization.connection.removed", {"organization": stark, "connection": saml}, None),
        (103, "user.created", t.user(ADA, "ada@example.com", "Ada Lovelace"), None),
        (104, "organization.member.role.deleted", {"organization": stark, "user": {"user_id": LINUS},
                                                   "role": t.role(AUDITOR, "auditor")}, None),
    ]  # fmt: skip
    return _rows(first, 800_000_000), _rows(second, 800_000_100)


def write_story(path: Path, *, indexed: bool = True, crowd: int = 0) -> None:
    """The story into a tenant database (`indexed` False: as a `stream` stopped before its idle-time indexer ran,
    the access history still empty); `crowd` events of the simulator's tenant life around it (other users,
    organizations and groups, from T0 on, half a second apart on average)."""
    first, second = story_rows()
    if crowd:
        rows, _life = simulated_rows(crowd, seed=7)
        first = sorted([*first, *(r for r in rows if r.time_ms < second[0].time_ms)], key=lambda r: r.time_ms)
        second = sorted(
            [*second, *(r for r in rows if r.time_ms >= second[0].time_ms)], key=lambda r: r.time_ms
        )
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=first, cursor="c1"))
        gap = GapMarker(
            "cursor expired: the stream's position was lost", resumed_from=iso(at(90)), lost_cursor="c1"
        )
        writer.commit_sync(Batch(gap=gap))
        writer.commit_sync(Batch(events=second, cursor="c2"))
        if indexed:
            writer.index_all_sync()
    finally:
        writer.close()
