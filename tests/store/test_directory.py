"""The entity directory kept from stored events: every event type, references before definitions, events out of
order, deletions that end memberships, agreement with the simulator's own world, and a schema-2 file upgraded."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import orjson
import pytest

from helpers.entity_events import T0, Tenant, envelope_row, simulated_rows
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.commit import insert_events
from tenant_events.store.directory import LIVE_BATCH
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.schema import _V1, _V2, _split
from tenant_events.wire.references import references


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "tenants" / "demo.sqlite3"
    writer = StoreWriter(path)
    yield writer, path
    writer.close()


def commit(writer, *rows):
    """One small batch: live events go into the directory in the batch's own transaction."""
    assert len(rows) <= LIVE_BATCH
    writer.commit_sync(Batch(events=list(rows), cursor="c"))


def current(path, kind, entity_id):
    """{relation: sorted tuples of the other ends' ids} of the links that hold now."""
    with DirectoryReader(path) as reader:
        state = reader.state(kind, entity_id)
    assert state is not None, (kind, entity_id)
    out: dict[str, list[tuple[str, ...]]] = {}
    for link in state.current_links:
        out.setdefault(link.relation.value, []).append(tuple(e.id for e in link.other(kind, entity_id)))
    return {k: sorted(v) for k, v in out.items()}


def entity(path, kind, entity_id):
    with DirectoryReader(path) as reader:
        return reader.entity(kind, entity_id)


def test_every_event_type_updates_the_directory(store):
    writer, path = store
    t = Tenant()
    u, org, grp, admin, support = (
        "auth0|grace",
        "org_0000000000000001",
        "grp_1abcdefghijkmn",
        "rol_admin",
        "rol_sup",
    )
    commit(
        writer,
        t.row("user.created", t.user(u, "grace@example.com", "Grace Hopper")),
        t.row("user.updated", t.user(u, "grace.hopper@example.com", "Grace Hopper")),
        t.row("organization.created", t.org(org, "stark", "Stark")),
        t.row("organization.updated", t.org(org, "stark", "Stark Industries")),
        t.row("organization.member.added", {"organization": t.org(org, "stark"), "user": {"user_id": u}}),
        t.row(
            "organization.member.role.assigned",
            {"organization": {"id": org}, "user": {"user_id": u}, "role": t.role(admin, "admin")},
        ),
        t.row("organization.connection.added", {"organization": t.org(org), "connection": {"id": "con_1"}}),
        t.row(
            "organization.connection.updated",
            {"organization": t.org(org), "connection": {"id": "con_1"}, "show_as_button": False},
        ),
        t.row("group.created", t.group(grp, "hr-8849", "organization", org)),
        t.row("group.updated", t.group(grp, "hr-8850", "organization", org)),
        t.row(
            "group.member.added",
            {
                "group": t.group(grp, "hr-8850", "organization", org),
                "member": {"member_type": "user", "id": u},
            },
        ),
        t.row(
            "group.member.added",
            {
                "group": t.group(grp, "hr-8850", "organization", org),
                "member": {"member_type": "connection", "id": "mem_1", "type": "x", "connection_id": "con_2"},
            },
        ),
        t.row(
            "group.role.assigned",
            {
                "group": t.group(grp, "hr-8850"),
                "role": t.role(support, "support"),
                "created_at": "2026-01-01T00:00:00Z",
            },
        ),
        t.row(
            "organization.group.role.assigned",
            {
                "organization": {"id": org},
                "role": t.role(admin, "admin"),
                "group": t.group(grp, "hr-8850", "organization", org),
                "created_at": "2026-01-01T00:00:00Z",
            },
        ),
    )
    grace = entity(path, "user", u)
    assert (grace.email, grace.name, grace.label, grace.deleted) == (
        "grace.hopper@example.com",
        "Grace Hopper",
        "grace.hopper@example.com",
        False,
    )
    stark = entity(path, "organization", org)
    assert (stark.name, stark.display, stark.label) == ("stark", "Stark Industries", "Stark Industries")
    group = entity(path, "group", grp)
    assert (group.name, group.detail) == ("hr-8850", "organization")
    assert entity(path, "role", admin).label == "admin"
    assert current(path, "user", u) == {
        "org_member": [(org,)],
        "org_member_role": [(org, admin)],
        "group_member": [(grp,)],
    }
    assert current(path, "organization", org) == {
        "org_member": [(u,)],
        "org_member_role": [(u, admin)],
        "org_connection": [("con_1",)],
        "org_group_role": [(grp, admin)],
    }
    assert current(path, "group", grp) == {
        "group_member": [(u,)],
        "group_connection_member": [("con_2",)],
        "group_role": [(support,)],
        "org_group_role": [(org, admin)],
    }
    assert current(path, "role", admin) == {"org_member_role": [(org, u)], "org_group_role": [(org, grp)]}
    assert current(path, "connection", "con_2") == {"group_connection_member": [(grp,)]}

    commit(
        writer,
        t.row(
            "organization.group.role.deleted",
            {
                "organization": {"id": org},
                "role": {"id": admin},
                "group": t.group(grp, "hr-8850", "organization", org),
                "deleted_at": "2026-01-02T00:00:00Z",
            },
        ),
        t.row(
            "group.role.deleted",
            {"group": t.group(grp, "hr-8850"), "role": {"id": support}, "deleted_at": "2026-01-02T00:00:00Z"},
        ),
        t.row(
            "group.member.deleted",
            {
                "group": t.group(grp, "hr-8850"),
                "member": {"member_type": "connection", "id": "mem_1", "connection_id": "con_2"},
            },
        ),
        t.row("organization.connection.removed", {"organization": t.org(org), "connection": {"id": "con_1"}}),
        t.row(
            "organization.member.role.deleted",
            {"organization": {"id": org}, "user": {"user_id": u}, "role": t.role(admin, "admin")},
        ),
    )
    assert current(path, "organization", org) == {"org_member": [(u,)]}
    assert current(path, "group", grp) == {"group_member": [(u,)]}
    commit(
        writer,
        t.row("organization.member.deleted", {"organization": t.org(org, "stark"), "user": {"user_id": u}}),
        t.row(
            "group.member.deleted",
            {"group": t.group(grp, "hr-8850"), "member": {"member_type": "user", "id": u}},
        ),
    )
    assert current(path, "user", u) == {}
    commit(
        writer,
        t.row("group.deleted", {**t.group(grp, "hr-8850", "organization", org), "updated_at": "x"}),
        t.row("organization.deleted", t.org(org, "stark", "Stark Industries")),
        t.row(
            "user.deleted", {**t.user(u, "grace.hopper@example.com"), "deleted_at": "2026-01-03T00:00:00Z"}
        ),
    )
    assert all(entity(path, k, i).deleted for k, i in (("group", grp), ("organization", org), ("user", u)))
    with DirectoryReader(path) as reader:
        past = reader.state("user", u).links
    assert {(link.relation.value, link.current) for link in past} == {
        ("org_member", False),
        ("org_member_role", False),
        ("group_member", False),
    }
    assert all(link.since_ms is not None and link.until_ms > link.since_ms for link in past)


def test_an_entity_named_only_by_reference_is_known_by_id_and_filled_in_later(store):
    writer, path = store
    t = Tenant()
    commit(
        writer,
        t.row(
            "organization.member.added",
            {"organization": {"id": "org_never_created"}, "user": {"user_id": "auth0|someone"}},
        ),
    )
    org, someone = entity(path, "organization", "org_never_created"), entity(path, "user", "auth0|someone")
    assert (org.label, org.name, someone.label, someone.email) == (
        "org_never_created",
        None,
        "auth0|someone",
        None,
    )
    assert current(path, "organization", "org_never_created") == {"org_member": [("auth0|someone",)]}
    # A later event names the organization; an OLDER user.created tells who the user is: both fill in.
    commit(
        writer,
        t.row(
            "organization.connection.added",
            {"organization": {"id": "org_never_created", "name": "acme"}, "connection": {"id": "con_1"}},
        ),
        t.row("user.created", t.user("auth0|someone", "ada@example.com", "Ada"), at=-100),
    )
    assert entity(path, "organization", "org_never_created").label == "acme"
    assert entity(path, "user", "auth0|someone").label == "ada@example.com"
    # a role removed from a group carries no name; the name from an assignment stays
    commit(
        writer,
        t.row(
            "group.role.assigned", {"group": t.group("grp_1abcdefghijkmn"), "role": t.role("rol_1", "viewer")}
        ),
        t.row("group.role.deleted", {"group": t.group("grp_1abcdefghijkmn"), "role": {"id": "rol_1"}}),
    )
    assert entity(path, "role", "rol_1").label == "viewer"


def test_an_older_event_arriving_later_never_overwrites_newer_state(store):
    writer, path = store
    t = Tenant()
    u = "auth0|late"
    commit(
        writer,
        t.row("user.created", t.user(u, "first@example.com"), at=1),
        t.row("user.updated", t.user(u, "newest@example.com"), at=30),
        t.row("user.updated", t.user(u, "older@example.com"), at=20),  # delivered late
    )
    assert entity(path, "user", u).email == "newest@example.com"
    member = {"organization": {"id": "org_a", "name": "a"}, "user": {"user_id": u}}
    commit(
        writer,
        t.row("organization.member.deleted", member, at=50),
        t.row("organization.member.added", member, at=40),
    )
    assert current(path, "user", u) == {}
    with DirectoryReader(path) as reader:
        (link,) = reader.state("user", u).links
    at = int(T0.timestamp() * 1000)
    assert (link.since_ms, link.until_ms) == (at + 40_000, at + 50_000)
    # the deletion comes first, then a create and an update that happened before it: the user stays deleted
    commit(
        writer,
        t.row("user.deleted", {**t.user(u, "newest@example.com"), "deleted_at": "x"}, at=100),
        t.row("user.updated", t.user(u, "stale@example.com"), at=90),
        t.row("user.created", t.user(u, "first@example.com"), at=1),
    )
    late = entity(path, "user", u)
    assert late.deleted and late.email == "newest@example.com"
    # a membership added before the user was deleted, delivered after the deletion, does not hold
    commit(
        writer,
        t.row(
            "group.member.added",
            {"group": t.group("grp_x1234567890abc"), "member": {"member_type": "user", "id": u}},
            at=95,
        ),
    )
    assert current(path, "user", u) == {}


def test_in_one_millisecond_the_stored_order_decides(store):
    writer, path = store
    t = Tenant()
    member = {"organization": {"id": "org_b", "name": "b"}, "user": {"user_id": "auth0|tie"}}
    commit(
        writer,
        t.row("organization.member.added", member, at=5),
        t.row("organization.member.deleted", member, at=5),
    )
    assert current(path, "user", "auth0|tie") == {}
    commit(writer, t.row("organization.member.added", member, at=5))
    assert current(path, "user", "auth0|tie") == {"org_member": [("org_b",)]}


def test_deleting_an_organization_ends_its_memberships_and_its_groups(store):
    writer, path = store
    t = Tenant()
    u, org, grp = "auth0|m", "org_c", "grp_c234567890abcd"
    commit(
        writer,
        t.row("organization.created", t.org(org, "c")),
        t.row("group.created", t.group(grp, "eng-1", "organization", org)),
        t.row("organization.member.added", {"organization": t.org(org, "c"), "user": {"user_id": u}}),
        t.row(
            "group.member.added",
            {"group": t.group(grp, "eng-1", "organization", org), "member": {"member_type": "user", "id": u}},
        ),
        t.row("organization.deleted", t.org(org, "c")),
    )
    assert entity(path, "group", grp).deleted  # no group.deleted was sent: the organization took it along
    assert current(path, "user", u) == {}


def test_a_catch_up_batch_is_in_the_directory_once_the_indexer_ran(store):
    writer, path = store
    rows, _life = simulated_rows(LIVE_BATCH + 400)
    writer.commit_sync(Batch(events=rows[:10], cursor="a"))  # live: at once
    with DirectoryReader(path) as reader:
        assert reader.watermark() == 10
    writer.commit_sync(Batch(events=rows[10:], cursor="b"))  # a catch-up's batch: left to the indexer
    with DirectoryReader(path) as reader:
        assert reader.watermark() == 10
    writer.index_all_sync()
    with DirectoryReader(path) as reader:
        assert reader.watermark() == len(rows)


def test_the_directory_agrees_with_the_simulated_tenants_world(store):
    """20,000 events of every type from the simulator's generator (consistent by construction): the memberships
    and roles that hold at the end are exactly the generator's, and so are the living users."""
    writer, path = store
    rows, life = simulated_rows(20_000)
    for i in range(0, len(rows), 1000):
        writer.commit_sync(Batch(events=rows[i : i + 1000], cursor=str(i)))
    writer.index_all_sync()
    conn = sqlite3.connect(path)
    try:
        alive = {
            r[0]
            for r in conn.execute(
                "SELECT id FROM entities WHERE kind = 'user'"
                " AND NOT coalesce(deleted_at > coalesce(created_at, -1), 0)"
            )
        }
        stored = {(r[0], r[1]) for r in conn.execute("SELECT kind, id FROM entities")}
        raws = [
            (r[0], orjson.loads(r[1])["event"]["data"]) for r in conn.execute("SELECT type, raw FROM events")
        ]
    finally:
        conn.close()
    assert alive == set(life.users)
    # the directory's entities are exactly those the events name (wire/references.py), parents aside
    named = {(r.kind, r.id) for kind, data in raws for r in references(kind, data) if r.place != "parent"}
    assert stored == named
    checked = 0
    for org in life.orgs.values():
        state = current(path, "organization", org.id)
        assert state.get("org_member", []) == sorted((m,) for m in org.members)
        roles = sorted((user, role) for user, held in org.member_roles.items() for role in held)
        assert state.get("org_member_role", []) == roles
        assert state.get("org_connection", []) == sorted((c,) for c in org.connections)
        checked += len(org.members)
    for group in life.groups.values():
        state = current(path, "group", group.id)
        assert state.get("group_member", []) == sorted((m,) for m in group.members)
        assert state.get("group_role", []) == sorted((r,) for r in group.roles)
        assert sorted(r for _org, r in state.get("org_group_role", [])) == sorted(group.org_roles)
        checked += len(group.members)
    assert checked > 200  # the world at the end is not empty (323 memberships with this seed)


def test_a_schema_2_database_gets_its_directory_when_opened(tmp_path):
    path = tmp_path / "old.sqlite3"
    rows, life = simulated_rows(3000)
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _split(_V1) + _split(_V2):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    conn.execute("BEGIN")
    insert_events(conn, rows)
    conn.execute("COMMIT")
    conn.close()
    StoreWriter(path).close()  # the migration builds the directory from the stored events
    with DirectoryReader(path) as reader:
        assert reader.watermark() == len(rows)
        alive = [u for u in life.users if reader.entity("user", u) and not reader.entity("user", u).deleted]
    assert len(alive) == len(life.users) > 0


def signed_up(n: int, uid: str, connection: dict[str, str] | None, at: float) -> object:
    """A user.created as a sign-up sends it: the connection it went through in `data.context.connection`."""
    data: dict[str, object] = {"object": Tenant.user(uid, f"{uid[-4:]}@example.com")}
    if connection is not None:
        data["context"] = {"tenant": {"id": "ten_DemoTenant000001"}, "connection": connection}
    return envelope_row("user.created", data, T0 + timedelta(seconds=at), 1000 + n)


SAML = {"id": "con_SAML000000000001", "name": "acme-saml", "strategy": "samlp"}
GOOGLE = {"id": "con_GOOG000000000001", "name": "google-oauth2", "strategy": "google-oauth2"}


def test_connections_get_their_names_and_strategies_from_the_events_that_went_through_them(store):
    writer, path = store
    t = Tenant()
    org = "org_0000000000000009"
    # first known by id alone: an organization gets the SAML connection before anyone signed up through it
    commit(
        writer,
        t.row(
            "organization.connection.added",
            {"organization": t.org(org), "connection": {"id": SAML["id"]}},
            at=1,
        ),
    )
    assert entity(path, "connection", SAML["id"]).label == SAML["id"]
    commit(
        writer,
        signed_up(1, "samlp|acme-saml|ada", SAML, 2),
        signed_up(2, "google-oauth2|1077", GOOGLE, 3),
        signed_up(3, "auth0|nocontext", None, 4),
    )
    saml, google = entity(path, "connection", SAML["id"]), entity(path, "connection", GOOGLE["id"])
    assert (saml.name, saml.detail, saml.label) == ("acme-saml", "samlp", "acme-saml (samlp)")
    assert (google.name, google.detail, google.label) == ("google-oauth2", "google-oauth2", "google-oauth2")
    # an event naming it by id alone keeps what was learned; an older sign-up arriving late changes nothing
    commit(
        writer,
        t.row(
            "organization.connection.updated",
            {"organization": t.org(org), "connection": {"id": SAML["id"]}},
            at=5,
        ),
        signed_up(4, "samlp|acme-saml|old", {**SAML, "name": "old-saml"}, 0.5),
    )
    assert entity(path, "connection", SAML["id"]).label == "acme-saml (samlp)"
    # a newer sign-up after a rename: the new name
    commit(writer, signed_up(5, "samlp|acme-saml|bob", {**SAML, "name": "acme-sso"}, 6))
    assert entity(path, "connection", SAML["id"]).label == "acme-sso (samlp)"
    with DirectoryReader(path) as reader:
        assert [e.id for e in reader.find("connection", "ACME-SSO")] == [SAML["id"]]
    assert current(path, "organization", org) == {
        "org_connection": [(SAML["id"],)]
    }  # a sign-up is not a link


def test_a_schema_4_database_learns_the_connections_of_the_events_it_holds(tmp_path):
    """Opened by this version, a file whose directory was built before connections were learned from the
    context gets them: the schema 5 migration builds the directory again."""
    path = tmp_path / "v4.sqlite3"
    rows, life = simulated_rows(1500)
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=rows, cursor="c"))
    writer.index_all_sync()
    writer.close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DELETE FROM entities WHERE kind = 'connection'")  # what schema 4 knew: ids at most
    conn.execute("DROP TABLE directory_scratch")
    conn.execute(
        "CREATE TABLE directory_scratch (seq INTEGER PRIMARY KEY, st INTEGER NOT NULL, type TEXT NOT NULL,"
        " rel INTEGER, adds INTEGER, skind TEXT, sid TEXT, sname TEXT, sdisplay TEXT, semail TEXT,"
        " sdetail TEXT, sparent TEXT, org TEXT, orgname TEXT, usr TEXT, grp TEXT, grpname TEXT,"
        " grptype TEXT, grpparent TEXT, role TEXT, rolename TEXT, con TEXT, conname TEXT, memkind TEXT,"
        " mem TEXT)"
    )
    conn.execute("PRAGMA user_version = 4")
    conn.close()
    StoreWriter(path).close()
    with DirectoryReader(path) as reader:
        labels = {c[0]: reader.entity("connection", c[0]) for c in life.connections}
    assert {k: v.label if v else None for k, v in labels.items()} == {
        con_id: name if name == strategy else f"{name} ({strategy})"
        for con_id, name, strategy in life.connections
    }
