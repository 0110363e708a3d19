"""The rules' state checks answered from links kept in memory (alerts/access_state.py) say what the entity
directory says, in a simulated tenant's world: fed in order, fed out of order, and read back after a restart."""

from __future__ import annotations

import random
import sqlite3

import orjson
import pytest

from helpers.entity_events import simulated_rows
from tenant_events.alerts import access_state
from tenant_events.alerts.access_state import AccessState, admin_like
from tenant_events.alerts.rule_parts import StateCheck
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.alert_records import EvalRow
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_records import Relation

N = 8_000
LATE_MS = 2**41  # a moment after every simulated event
HOLDS = StateCheck(check="group_holds_admin_role")
HELD = StateCheck(check="group_held_admin_role")
ORG_ADMIN = StateCheck(check="user_is_org_admin")


def at(time_ms: int) -> EvalRow:
    return EvalRow(0, "", "group.member.added", "", time_ms, "", None, None)


def fed(rows, order=None, types=access_state.TYPES) -> AccessState:
    state = AccessState()
    for seq in order or range(1, len(rows) + 1):
        r = rows[seq - 1]
        if r.type in types:
            state.apply(r.type, r.time_ms, seq, orjson.loads(r.raw)["event"]["data"])
    return state


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A simulated tenant's events stored (directory complete), and what the directory says of each check."""
    path = tmp_path_factory.mktemp("world") / "demo.sqlite3"
    rows, _life = simulated_rows(N)
    writer = StoreWriter(path)
    try:
        for i in range(0, N, 1000):
            writer.commit_sync(Batch(events=rows[i : i + 1000], cursor=str(i)))
        writer.index_all_sync()
    finally:
        writer.close()
    want: dict[tuple[str, ...], bool] = {}
    with sqlite3.connect(path) as conn, DirectoryReader(path) as reader:
        for (group,) in conn.execute("SELECT id FROM entities WHERE kind = 'group'"):
            state = reader.state("group", group, {Relation.GROUP_ROLE, Relation.ORG_GROUP_ROLE})
            assert state is not None
            want["g", group] = any(
                any(e.kind == "role" and admin_like(e.name) for e in link.ends)
                for link in state.current_links
            )
        for user, org in conn.execute("SELECT DISTINCT b, a FROM links WHERE rel = 2"):
            state = reader.state("user", user, {Relation.ORG_MEMBER_ROLE})
            assert state is not None
            want["u", user, org] = any(
                any(e.id == org for e in link.ends)
                and any(e.kind == "role" and admin_like(e.name) for e in link.ends)
                for link in state.current_links
            )
        for con, org in conn.execute("SELECT DISTINCT b, a FROM links WHERE rel = 3"):
            state = reader.state("connection", con, {Relation.ORG_CONNECTION})
            assert state is not None
            since = [link.since_ms for link in state.current_links if any(e.id == org for e in link.ends)]
            want["c", con, org, str(since[0] if since else None)] = bool(since)
    return rows, path, want


def answers(state: AccessState, want) -> dict[tuple[str, ...], bool]:
    got = {}
    for key in want:
        if key[0] == "g":
            got[key] = state(HOLDS, at(LATE_MS), {"object": {"group": {"id": key[1]}}})
        elif key[0] == "u":
            got[key] = state(
                ORG_ADMIN,
                at(LATE_MS),
                {"object": {"organization": {"id": key[2]}, "user": {"user_id": key[1]}}},
            )
        else:  # connection added within 30 min, asked 20 min after it was added
            since = int(key[3]) if key[3] != "None" else 0
            check = StateCheck(check="connection_added_within", minutes=30)
            got[key] = state(
                check,
                at(since + 20 * 60_000),
                {"object": {"organization": {"id": key[2]}, "connection": {"id": key[1]}}},
            )
    return got


def test_fed_in_stored_order_every_check_says_what_the_directory_says(world):
    rows, _path, want = world
    assert answers(fed(rows), want) == want
    assert (
        sum(want.values()) > 50 and len(want) - sum(want.values()) > 500
    )  # both answers occur, of each kind
    assert {k[0] for k, v in want.items() if v} == {"g", "u", "c"}


def test_fed_only_what_a_check_depends_on_it_says_the_same(world):
    """An engine takes in only the events its rules' checks depend on (access_state.NEEDS)."""
    rows, _path, want = world
    types = access_state.types_for(["connection_added_within"])
    assert types < access_state.TYPES
    mine = {k: v for k, v in want.items() if k[0] == "c"}
    assert answers(fed(rows, types=types), mine) == mine


def test_fed_out_of_order_the_stamps_decide_and_the_answers_are_the_same(world):
    rows, _path, want = world
    order = list(range(1, N + 1))
    rng = random.Random(7)
    for low in range(0, N, 300):  # delivered out of order within a few minutes
        piece = order[low : low + 300]
        rng.shuffle(piece)
        order[low : low + 300] = piece
    assert answers(fed(rows, order), want) == want


def test_read_back_from_the_directory_after_a_restart_the_answers_are_the_same(world):
    _rows, path, want = world
    writer = StoreWriter(path)
    try:
        links, upto = writer.run_alert_job(lambda ledger: ledger.access_links()).result()
    finally:
        writer.close()
    assert upto == N
    restored = AccessState()
    restored.load(links)
    assert answers(restored, want) == want


def test_a_deleted_group_held_its_admin_role_up_to_its_deletion_and_not_after():
    state = AccessState()
    group = {"id": "grp_1", "type": "tenant", "name": "ops"}
    state.apply(
        "group.role.assigned", 1_000, 1, {"object": {"group": group, "role": {"id": "r1", "name": "Admin"}}}
    )
    state.apply(
        "group.role.assigned", 1_100, 2, {"object": {"group": group, "role": {"id": "r2", "name": "viewer"}}}
    )
    assert state(HOLDS, at(1_200), {"object": {"group": group}})
    state.apply("group.deleted", 2_000, 3, {"object": group})
    deleted = EvalRow(3, "", "group.deleted", "", 2_000, "", None, None)
    assert state(HELD, deleted, {"object": group})  # the deletion took an admin role away
    assert not state(HOLDS, at(2_001), {"object": {"group": group}})
    assert not state(HELD, at(3_000), {"object": group})  # gone before that moment
    # a removal names the role by id alone: the name the assignment gave it decides
    state.apply(
        "group.role.assigned", 4_000, 4, {"object": {"group": group, "role": {"id": "r1", "name": "Admin"}}}
    )
    state.apply("group.role.deleted", 5_000, 5, {"object": {"group": group, "role": {"id": "r1"}}})
    assert not state(HOLDS, at(5_001), {"object": {"group": group}})


def test_trying_a_state_rule_on_history_answers_its_check_from_the_events_tried(tmp_path):
    """Trying a rule on history (Test against history) answers its state check too: the group's admin role
    assigned in the period tried makes a member added afterwards count; one added before, or to another group,
    does not."""
    from helpers.alert_events import BASE, event
    from tenant_events.alert_settings import WorkingHours
    from tenant_events.alerts import BUILTIN_RULES, load_rules
    from tenant_events.alerts.history import try_rule
    from tenant_events.store import AlertInbox, Batch, StoreWriter

    rule = next(r for r in load_rules([], BUILTIN_RULES).rules if r.id == "admin-group-member")
    other = event("group.member.added", 30)
    other = other._replace(raw=other.raw.replace("grp_" + "G" * 14, "grp_" + "H" * 14))
    rows = [
        event("group.member.added", 10),  # before the group held an admin role
        event("group.role.assigned", 20, role="admin"),
        other,  # another group
        event("group.member.added", 40),  # counts
    ]
    writer = StoreWriter(tmp_path / "history.sqlite3")
    try:
        writer.commit_sync(Batch(events=rows, cursor="c"))
    finally:
        writer.close()
    hours = WorkingHours(start="00:00", end="00:00", timezone="UTC")
    with AlertInbox(tmp_path / "history.sqlite3") as inbox:
        trial = try_rule(inbox, rule, hours=hours, profile="demo", now=BASE.timestamp() + 3600)
    assert (trial.firings, trial.events) == (1, 1), trial
