"""The access history says, for every moment, what a plain model of the directory's rules says: random sequences
of memberships, role grants and removals, connections, deletions and renames, delivered out of order in random
batches, compared after every batch at every moment (each event's stamp and the one before it), with the events
that began and ended each span (a diff between two moments is read from those); and at the end the history's present equals the entity directory.

The model is written from the rules as docs/access-review.md states them, not from the code: a link holds at a
moment when its newest add up to then is newer than everything up to then that ends it — its own removal, the
deletion of an end, the deletion of a group's organization, and for a member's role the member leaving; and a
link whose first own event is its removal held from before the history until the first thing that ended it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.entity_events import T0, envelope_row, simulated_rows
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.directory import LIVE_BATCH, Rel
from tenant_events.store.entity_state import holding_links

# A small world, so that a few dozen events meet often: the same member granted, removed, deleted, re-added.
USERS = ("auth0|u1", "auth0|u2")
ORGS = ("org_1", "org_2")
GROUPS = {"grp_1": "org_1", "grp_2": None}  # group → its organization (None: a tenant group)
ROLES = {"rol_admin": "admin", "rol_view": "viewer"}
CONNECTIONS = ("con_1", "con_2")
MASK = (1 << 20) - 1
EVER = 2**62 - 1


def _group(gid: str) -> dict[str, object]:
    org = GROUPS[gid]
    return {
        "id": gid,
        "name": gid,
        "type": "organization" if org else "tenant",
        **({"organization_id": org} if org else {}),
    }


@dataclass(frozen=True)
class Ev:
    """One generated event: its type, its object, the link it adds or ends (if any) and what it deletes."""

    type: str
    obj: dict[str, object]
    key: tuple[int, str, str, str] | None = None
    adds: bool = False
    deletes: tuple[str, str] | None = None


def _link(kind: str, adds: bool, rel: Rel, a: str, b: str, c: str, obj: dict[str, object]) -> Ev:
    verb = {True: "added", False: "deleted"}[adds]
    if kind.endswith(".role") or kind == "group.role":
        verb = "assigned" if adds else "deleted"
    if kind == "organization.connection":
        verb = "added" if adds else "removed"
    return Ev(f"{kind}.{verb}", obj, (int(rel), a, b, c), adds)


@st.composite
def an_event(draw: st.DrawFn) -> Ev:
    user, org, role = (
        draw(st.sampled_from(USERS)),
        draw(st.sampled_from(ORGS)),
        draw(st.sampled_from(list(ROLES))),
    )
    group, con, adds = (
        draw(st.sampled_from(list(GROUPS))),
        draw(st.sampled_from(CONNECTIONS)),
        draw(st.booleans()),
    )
    o, u, r = {"id": org, "name": org}, {"user_id": user}, {"id": role, "name": ROLES[role]}
    choice = draw(st.integers(0, 11))
    if choice == 0:
        return _link(
            "organization.member", adds, Rel.ORG_MEMBER, org, user, "", {"organization": o, "user": u}
        )
    if choice in (1, 2):
        obj = {"organization": o, "user": u, "role": r}
        return _link("organization.member.role", adds, Rel.ORG_MEMBER_ROLE, org, user, role, obj)
    if choice == 3:
        obj = {"organization": o, "connection": {"id": con, "name": con}}
        return _link("organization.connection", adds, Rel.ORG_CONNECTION, org, con, "", obj)
    if choice == 4:
        obj = {"organization": o, "group": _group(group), "role": r}
        return _link("organization.group.role", adds, Rel.ORG_GROUP_ROLE, org, group, role, obj)
    if choice == 5:
        obj = {"group": _group(group), "member": {"member_type": "user", "id": user}}
        return _link("group.member", adds, Rel.GROUP_MEMBER, group, user, "", obj)
    if choice == 6:
        member = {"member_type": "connection", "id": f"mem_{con}", "connection_id": con}
        return _link(
            "group.member",
            adds,
            Rel.GROUP_CONNECTION_MEMBER,
            group,
            con,
            "",
            {"group": _group(group), "member": member},
        )
    if choice == 7:
        return _link("group.role", adds, Rel.GROUP_ROLE, group, role, "", {"group": _group(group), "role": r})
    if choice == 8:  # a user deleted, or renamed (which changes no access)
        if adds:
            return Ev(
                "user.updated",
                {"user_id": user, "email": f"{user[6:]}@example.com", "name": draw(st.sampled_from("AB"))},
            )
        return Ev("user.deleted", {"user_id": user}, deletes=("user", user))
    if choice == 9:
        if adds:
            return Ev(
                "organization.updated", {"id": org, "name": org, "display_name": draw(st.sampled_from("XY"))}
            )
        return Ev("organization.deleted", {"id": org, "name": org}, deletes=("organization", org))
    if choice == 10:
        if adds:
            return Ev("group.updated", {**_group(group), "name": draw(st.sampled_from(("hr", "ops")))})
        return Ev("group.deleted", _group(group), deletes=("group", group))
    return Ev(
        "organization.created" if adds else "user.created",
        {"id": org, "name": org} if adds else {"user_id": user},
    )


BYSTANDER = Ev("user.updated", {"user_id": "auth0|bystander", "name": "B"})  # renamed and renamed: no access


@dataclass(frozen=True)
class Stored:
    ev: Ev
    seq: int
    time_ms: int

    @property
    def stamp(self) -> int:
        return (self.time_ms << 20) | (self.seq & MASK)


def _ends(key: tuple[int, str, str, str]) -> list[tuple[str, str]]:
    """The entities whose deletion ends a link of `key`, with a group's organization."""
    rel, a, b, _c = key
    kinds = {1: ("organization", "user"), 2: ("organization", "user"), 3: ("organization", ""), 4: ("organization", "group"),
             5: ("group", "user"), 6: ("group", ""), 7: ("group", "")}[rel]  # fmt: skip
    out = [(kind, ident) for kind, ident in zip(kinds, (a, b), strict=True) if kind]
    out += [("organization", GROUPS[g]) for kind, g in out if kind == "group" and GROUPS[g]]
    return out


def _endings(stored: list[Stored], key: tuple[int, str, str, str]) -> list[Stored]:
    """The events that end the link `key`: its removal, a deletion of an end, a member leaving (for a role)."""
    return [
        s
        for s in stored
        if (s.ev.key == key and not s.ev.adds)
        or (s.ev.deletes is not None and s.ev.deletes in _ends(key))
        or (key[0] == Rel.ORG_MEMBER_ROLE and s.ev.key == (1, key[1], key[2], "") and not s.ev.adds)
    ]


def model(stored: list[Stored], moment: int) -> dict[tuple[int, str, str, str], tuple[int, int]]:
    """The links that hold at `moment`, each with (seq of the add that began its span, stamp of that add). A link
    whose first own event (of all stored) is its removal held before it, from before the history: (0, 0)."""
    held = {}
    for key in {s.ev.key for s in stored if s.ev.key is not None}:
        own = sorted((s for s in stored if s.ev.key == key), key=lambda s: s.stamp)
        endings = [s.stamp for s in _endings(stored, key) if s.stamp <= moment]
        last_end = max(endings, default=-1)
        adds = [s for s in own if s.ev.adds and s.stamp <= moment]
        if adds and max(a.stamp for a in adds) > last_end:
            began = min((a for a in adds if a.stamp > last_end), key=lambda a: a.stamp)
            held[key] = (began.seq, began.stamp)
        elif not own[0].ev.adds and not endings:  # removed before it was ever seen given: it held until then
            held[key] = (0, 0)
    return held


def first_ending(stored: list[Stored], key: tuple[int, str, str, str], after: int) -> int | None:
    """The seq of the first event after stamp `after` that ends the link `key` (None: nothing ends it)."""
    enders = [s for s in _endings(stored, key) if s.stamp > after]
    return min(enders, key=lambda s: s.stamp).seq if enders else None


def _key(span) -> tuple[int, str, str, str]:
    ids = (*span.ids, "") if len(span.ids) == 2 else span.ids
    return (int(Rel[span.relation.name]), *ids)


def check(path: Path, stored: list[Stored]) -> None:
    """At every moment: the links that held, the event that began each one's span and the one that ended it."""
    told = [s for s in stored if s.ev is not BYSTANDER]  # (its events change nothing: no moment of their own)
    moments = sorted({m for s in told for m in (s.stamp, s.stamp - 1, (s.time_ms << 20) | MASK)} | {EVER})
    with AccessReader(path) as reader:
        for moment in moments:
            spans = reader.held_at(moment).spans
            want = model(told, moment)  # (the bystander's events neither add, end nor delete anything)
            assert {_key(s): (s.since_seq, s.since) for s in spans} == want, moment
            assert {_key(s): s.until_seq for s in spans} == {
                k: first_ending(told, k, v[1]) for k, v in want.items()
            }


def directory_now(path: Path) -> set[tuple[int, str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return {(int(rel), a, b, c) for rel in Rel for a, b, c, _added in holding_links(conn, rel)}
    finally:
        conn.close()


def deliver(
    path: Path, events: list[Ev], seconds: list[int], order: list[int], cuts: list[int], catch_up: bool
) -> None:
    """Store `events` in `order`, cut into batches at `cuts`, event i at T0 + seconds[i] (+ i % 3 ms), checking
    every moment after each batch. Small batches go into the history in their own transaction (live events); a
    batch padded past directory.LIVE_BATCH with events that change no access is left to the idle-time indexer
    (a catch-up)."""
    writer = StoreWriter(path)
    stored: list[Stored] = []
    try:
        for low, high in zip([0, *cuts], [*cuts, len(events)], strict=True):
            batch = [
                (events[i], T0 + timedelta(seconds=seconds[i], milliseconds=i % 3), i)
                for i in order[low:high]
            ]
            if not batch:
                continue
            if catch_up:
                batch += [
                    (BYSTANDER, T0 + timedelta(seconds=k % 13), 1000 * (high + 1) + k)
                    for k in range(LIVE_BATCH + 1)
                ]
            rows = [envelope_row(ev.type, {"object": ev.obj}, when, n) for ev, when, n in batch]
            result = writer.commit_sync(Batch(events=rows, cursor=str(high)))
            first = result.first_seq or 0
            stored += [Stored(ev, first + k, rows[k].time_ms) for k, (ev, _w, _n) in enumerate(batch)]
            writer.index_all_sync()
            check(path, stored)
    finally:
        writer.close()
    assert {k for k in model(stored, EVER)} == directory_now(path)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(an_event(), min_size=4, max_size=30),
    data=st.data(),
)
def test_every_moment_matches_the_model_whatever_the_delivery_order(tmp_path_factory, events, data):
    seconds = data.draw(st.lists(st.integers(0, 12), min_size=len(events), max_size=len(events)))
    order = data.draw(st.permutations(range(len(events))))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(events) - 1)), max_size=3)))
    catch_up = data.draw(st.booleans())
    deliver(tmp_path_factory.mktemp("access") / "demo.sqlite3", events, seconds, order, cuts, catch_up)


@pytest.mark.parametrize("catch_up", [False, True])
def test_a_late_add_before_a_removal_undoes_access_from_before_the_history(tmp_path, catch_up):
    """A user is deleted, then added to an organization and removed from it again; the removal arrives before
    the add. Until the add arrives the removal is the link's first event, so it held from before the history
    until the user's deletion; once the add arrives the link's first event is the add, and nothing says the user
    was a member before the deletion: that span must go, whatever order the events came in."""
    org, user = {"id": "org_2", "name": "org_2"}, {"user_id": "auth0|u2"}
    key = (int(Rel.ORG_MEMBER), "org_2", "auth0|u2", "")
    events = [
        Ev("user.deleted", user, deletes=("user", "auth0|u2")),
        Ev("organization.member.deleted", {"organization": org, "user": user}, key, adds=False),
        Ev("organization.member.added", {"organization": org, "user": user}, key, adds=True),
    ]
    deliver(tmp_path / "demo.sqlite3", events, [0, 2, 1], [0, 1, 2], [1, 2], catch_up)


def test_the_present_of_a_simulated_tenant_is_its_entity_directory(tmp_path):
    """Thousands of the simulator's events (every type, a consistent world): the history at the end holds
    exactly the links the directory says hold, and each began with an add of that link."""
    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(6000)
    writer = StoreWriter(path)
    try:
        for i in range(0, len(rows), 1000):
            writer.commit_sync(Batch(events=rows[i : i + 1000], cursor=str(i)))
        writer.index_all_sync()
    finally:
        writer.close()
    with AccessReader(path) as reader:
        now = reader.held_at(EVER)
        began = reader.events(s.since_seq for s in now.spans)
    assert {_key(s) for s in now.spans} == directory_now(path)
    assert now.reach.behind == 0 and now.reach.first_ms == rows[0].time_ms
    assert all(began[s.since_seq].type.endswith((".added", ".assigned")) for s in now.spans)


@pytest.mark.parametrize("rebuild", ["reindex", "migration"])
def test_a_rebuilt_history_is_the_same_history(tmp_path, rebuild):
    """`tenant-events reindex`, or a database from before the history existed, end at the same spans."""
    from tenant_events.store.reindex import reindex

    path = tmp_path / "demo.sqlite3"
    rows, _life = simulated_rows(3000, seed=5)
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=rows, cursor="c"))
        writer.index_all_sync()
    finally:
        writer.close()
    conn = sqlite3.connect(path)
    spans = sorted(conn.execute("SELECT * FROM access_spans"))
    if rebuild == "migration":  # as schema 5 left it: no history tables, user_version 5
        for table in ("access_marks", "access_ends", "access_groups", "access_spans"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM counters WHERE name LIKE 'access_%'")
        conn.execute("PRAGMA user_version = 5")
        conn.commit()
        conn.close()
        writer = StoreWriter(path)  # migrates; its idle-time indexer fills the history
        writer.index_all_sync()
        writer.close()
    else:
        conn.close()
        reindex(path)
    conn = sqlite3.connect(path)
    try:
        assert sorted(conn.execute("SELECT * FROM access_spans")) == spans
    finally:
        conn.close()
