"""Stores for the entity window tests: the simulator's generated tenant life, then a hand-written story of one user
(Grace) whose timeline the tests check entry by entry."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from helpers.entity_events import T0, Tenant, envelope_row, simulated_rows
from tenant_events.store import Batch, EventRow, StoreWriter

GRACE, STARK, HR, ADMIN = (
    "auth0|3de8f2ea3c49",
    "org_0000000000stark",
    "grp_hr8849abcdefgh",
    "rol_admin0000000001",
)
GRACE_EMAIL = "grace.hopper@example.com"


def grace_story(at: float = 5000, uid: str = GRACE) -> list[EventRow]:
    """Eight events, one second apart from `at` seconds after T0 (ids apart from the generated ones); five name
    Grace."""
    t = Tenant()
    member = {"organization": {"id": STARK}, "user": {"user_id": uid}}
    story = [
        ("user.created", t.user(uid, GRACE_EMAIL, "Grace Hopper")),
        ("organization.created", t.org(STARK, "stark", "Stark")),
        ("group.created", t.group(HR, "hr-8849", "organization", STARK)),
        ("organization.member.added", member),
        ("organization.member.role.assigned", {**member, "role": t.role(ADMIN, "admin")}),
        ("group.member.added", {"group": {"id": HR}, "member": {"member_type": "user", "id": uid}}),
        ("organization.updated", t.org(STARK, "stark", "Stark")),
        ("user.updated", t.user(uid, GRACE_EMAIL, "Grace B. Hopper")),
    ]
    return [
        envelope_row(kind, {"object": obj}, T0 + timedelta(seconds=at + k), 900_000_000 + int(at) + k)
        for k, (kind, obj) in enumerate(story)
    ]


# Grace's timeline, newest first: (type, sentence) as a person would write it from the story above.
GRACE_TIMELINE = [
    ("user.updated", f"user {GRACE_EMAIL} updated"),
    ("group.member.added", f"{GRACE_EMAIL} added to group hr-8849"),
    ("organization.member.role.assigned", f"{GRACE_EMAIL} added to organization Stark as admin"),
    ("organization.member.added", f"{GRACE_EMAIL} added to organization Stark"),
    ("user.created", f"user {GRACE_EMAIL} created"),
]


def write_store(
    path: Path,
    generated: int,
    seed: int,
    story: bool = True,
    at: float = 5000,
    until_s: float | None = None,
    uid: str = GRACE,
) -> list[EventRow]:
    """`generated` simulator events (seeded; with `until_s`, only those before that many seconds after T0), then
    Grace's story; indexed as the idle indexer would."""
    rows, _life = simulated_rows(generated, seed=seed)
    if until_s is not None:
        end = int((T0 + timedelta(seconds=until_s)).timestamp() * 1000)
        rows = [r for r in rows if r.time_ms < end]
    if story:
        rows += grace_story(at, uid)
    writer = StoreWriter(path)
    for i in range(0, len(rows), 1000):
        writer.commit_sync(Batch(events=rows[i : i + 1000], cursor=str(i)))
    writer.index_all_sync()
    writer.close()
    return rows
