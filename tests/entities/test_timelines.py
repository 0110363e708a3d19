"""Object timelines through the Qt-free API the desktop's timeline pane will use: across tenants, paged newest
first, complete before the indexer ran, and exactly the events that name the object."""

from __future__ import annotations

import orjson
import pytest

from helpers.entity_events import Tenant, simulated_rows
from tenant_events.entities.objects import ObjectSpec, parse_object
from tenant_events.entities.timeline import Timelines
from tenant_events.errors import UserFixableError
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.wire.references import references


def _named(rows, kind, entity_id):
    return [
        r.event_id
        for r in rows
        if any(
            (x.kind, x.id) == (kind, entity_id)
            for x in references(r.type, orjson.loads(r.raw)["event"]["data"])
        )
    ]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    path = tmp_path_factory.mktemp("timelines") / "sim.sqlite3"
    rows, life = simulated_rows(6000, seed=5)
    writer = StoreWriter(path)
    for i in range(0, len(rows), 1000):
        writer.commit_sync(Batch(events=rows[i : i + 1000], cursor=str(i)))
    writer.index_all_sync()
    # and a tail the indexer has not reached: found by substring until it does
    tail, _ = simulated_rows(6500, seed=5)
    writer.commit_sync(Batch(events=tail[6000:], cursor="tail"))
    writer.close()
    return path, rows + tail[6000:], life


def test_every_kind_of_object_has_exactly_the_events_that_name_it(simulated):
    path, rows, life = simulated
    org = next(iter(life.orgs.values()))
    group = next(iter(life.groups.values()))
    objects = [
        ("user", next(iter(life.users))),
        ("organization", org.id),
        ("group", group.id),
        ("role", life.roles[0][0]),
        ("connection", life.connections[0][0]),
    ]
    with DirectoryReader(path) as directory:
        assert directory.unindexed() == 500
        for kind, entity_id in objects:
            got = [e.event_id for e in reversed(directory.timeline(kind, entity_id, None, 100_000))]
            assert got == _named(rows, kind, entity_id), (kind, entity_id)
            assert got, (kind, entity_id)
            # paged newest first, 7 at a time, it is the same list
            paged, before = [], None
            while page := directory.timeline(kind, entity_id, before, 7):
                paged += page
                before = page[-1].seq
            assert [e.event_id for e in reversed(paged)] == got


def test_one_email_across_tenants_pages_as_one_timeline(tmp_path):
    t = Tenant()
    stores = {}
    for tenant, uid in (("acme", "auth0|a1"), ("globex", "google-oauth2|1099")):
        path = tmp_path / f"{tenant}.sqlite3"
        writer = StoreWriter(path)
        writer.commit_sync(
            Batch(
                events=[
                    t.row("user.created", t.user(uid, "ada@example.com", "Ada")),
                    t.row(
                        "organization.member.added",
                        {"organization": {"id": f"org_{tenant}", "name": tenant}, "user": {"user_id": uid}},
                    ),
                    t.row("user.created", t.user(f"{uid}-other", "someone@example.com")),
                    t.row("user.updated", t.user(uid, "ada@example.com", "Ada L.")),
                ],
                cursor="c",
            )
        )
        writer.close()
        stores[tenant] = path
    with Timelines(stores) as timelines:
        found = timelines.resolve(parse_object("email:ADA@example.com"))
        assert [(tenant, e.id) for tenant, e in found] == [
            ("acme", "auth0|a1"),
            ("globex", "google-oauth2|1099"),
        ]
        everything = list(timelines.everything(found))
        assert [(e.tenant, e.event.type) for e in everything] == [
            ("acme", "user.created"),
            ("acme", "organization.member.added"),
            ("acme", "user.updated"),
            ("globex", "user.created"),
            ("globex", "organization.member.added"),
            ("globex", "user.updated"),
        ]
        newest_first, before = [], None
        while True:
            page = timelines.page(found, before, 2)
            newest_first += page.entries
            before = page.before
            if page.done:
                break
        assert [e.order for e in newest_first] == [e.order for e in reversed(everything)]
        states = timelines.states(found)
        assert [(tenant, [link.ends[0].id for link in s.current_links]) for tenant, s in states] == [
            ("acme", ["org_acme"]),
            ("globex", ["org_globex"]),
        ]
        # an id no event names is looked for anyway, and found nowhere
        ghost = timelines.resolve(ObjectSpec("role", "rol_ghost"))
        assert list(timelines.everything(ghost)) == [] and timelines.states(ghost) == []


@pytest.mark.parametrize("bad", ["auth0|x", "users:1", "org:", ":x", ""])
def test_an_object_is_named_with_a_known_prefix(bad):
    with pytest.raises(UserFixableError, match="does not name an object"):
        parse_object(bad)
    assert parse_object(" Org : stark ") == ObjectSpec("organization", "stark")
