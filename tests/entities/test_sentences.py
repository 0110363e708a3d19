"""Summary sentences with names from the directory, for every event type; ids stay in mentions and searchable."""

from __future__ import annotations

import asyncio

import pytest

from helpers.entity_events import Tenant
from tenant_events.entities import Mention, describe, describe_all, describe_stored
from tenant_events.entities.page_names import PageNames
from tenant_events.errors import StorageError
from tenant_events.store import Batch, EventFilter, EventReader, StoreWriter
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.wire import EventType

GRACE, STARK, HR, ADMIN, SUPPORT, SSO = (
    "auth0|3de8f2ea3c49",
    "org_0000000000stark",
    "grp_hr8849abcdefgh",
    "rol_admin0000000001",
    "rol_support00000001",
    "con_sso0000000000001",
)
t = Tenant()
# What the directory learns first: who these ids are.
KNOWN = [
    t.row("user.created", t.user(GRACE, "grace.hopper@example.com", "Grace Hopper")),
    t.row("organization.created", t.org(STARK, "stark", "Stark")),
    t.row("group.created", t.group(HR, "hr-8849", "organization", STARK)),
    t.row("group.role.assigned", {"group": t.group(HR, "hr-8849"), "role": t.role(SUPPORT, "support")}),
    t.row(
        "organization.member.role.assigned",
        {"organization": {"id": STARK}, "user": {"user_id": GRACE}, "role": t.role(ADMIN, "admin")},
    ),
]
GROUP = t.group(HR, "hr-8849", "organization", STARK)
MEMBER = {"organization": {"id": STARK}, "user": {"user_id": GRACE}}
# (type, data.object, sentence): the references carry ids only (or stale names); names come from the directory.
CASES = [
    ("user.created", t.user(GRACE, "grace.hopper@example.com"), "user grace.hopper@example.com created"),
    ("user.updated", t.user(GRACE, "grace@stark.example"), "user grace@stark.example updated"),
    (
        "user.deleted",
        {**t.user(GRACE, "grace.hopper@example.com"), "deleted_at": "x"},
        "user grace.hopper@example.com deleted",
    ),
    ("organization.created", t.org(STARK, "stark", "Stark"), "organization Stark created"),
    (
        "organization.updated",
        t.org(STARK, "stark", "Stark Industries"),
        "organization Stark Industries updated",
    ),
    ("organization.deleted", t.org(STARK, "stark"), "organization stark deleted"),
    ("organization.member.added", MEMBER, "grace.hopper@example.com added to organization Stark"),
    ("organization.member.deleted", MEMBER, "grace.hopper@example.com removed from organization Stark"),
    (
        "organization.member.role.assigned",
        {**MEMBER, "role": {"id": ADMIN, "name": "admin"}},
        "grace.hopper@example.com added to organization Stark as admin",
    ),
    (
        "organization.member.role.deleted",
        {**MEMBER, "role": {"id": ADMIN}},
        "role admin removed from grace.hopper@example.com in organization Stark",
    ),
    (
        "organization.connection.added",
        {"organization": {"id": STARK}, "connection": {"id": SSO}},
        f"connection {SSO} added to organization Stark",
    ),
    (
        "organization.connection.updated",
        {"organization": {"id": STARK}, "connection": {"id": SSO, "name": "sso"}},
        "connection sso updated in organization Stark",
    ),
    (
        "organization.connection.removed",
        {"organization": {"id": STARK}, "connection": {"id": SSO}},
        f"connection {SSO} removed from organization Stark",
    ),
    (
        "organization.group.role.assigned",
        {"organization": {"id": STARK}, "group": GROUP, "role": {"id": SUPPORT, "name": "support"}},
        "role support assigned to group hr-8849 in organization Stark",
    ),
    (
        "organization.group.role.deleted",
        {"organization": {"id": STARK}, "group": GROUP, "role": {"id": SUPPORT}},
        "role support removed from group hr-8849 in organization Stark",
    ),
    ("group.created", GROUP, "group hr-8849 created in organization Stark"),
    ("group.updated", {**GROUP, "name": "hr-8850"}, "group hr-8850 updated"),
    ("group.deleted", GROUP, "group hr-8849 deleted"),
    (
        "group.member.added",
        {"group": {"id": HR}, "member": {"member_type": "user", "id": GRACE}},
        "grace.hopper@example.com added to group hr-8849",
    ),
    (
        "group.member.deleted",
        {"group": {"id": HR}, "member": {"member_type": "connection", "id": "m", "connection_id": SSO}},
        f"connection {SSO} removed from group hr-8849",
    ),
    (
        "group.role.assigned",
        {"group": {"id": HR}, "role": {"id": SUPPORT, "name": "support"}},
        "role support assigned to group hr-8849",
    ),
    (
        "group.role.deleted",
        {"group": {"id": HR}, "role": {"id": SUPPORT}},
        "role support removed from group hr-8849",
    ),
]


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    path = tmp_path_factory.mktemp("sentences") / "demo.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=KNOWN, cursor="c"))
    writer.close()
    with DirectoryReader(path) as reader:
        yield reader


def test_the_cases_cover_every_event_type():
    assert sorted(c[0] for c in CASES) == sorted(t.value for t in EventType)


@pytest.mark.parametrize(("event_type", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_event_type_reads_as_a_sentence_with_names(directory, event_type, obj, expected):
    from tenant_events.entities import describe_all

    (sentence,) = describe_all([(event_type, {"object": obj})], directory)
    assert sentence.text == expected
    # every name is a mention that still carries the raw id
    ids = {m.id for m in sentence.mentions}
    assert ids <= {GRACE, STARK, HR, ADMIN, SUPPORT, SSO}
    assert ids, sentence


def test_without_the_directory_ids_stand_in_for_names_and_odd_payloads_fall_back():
    sentence = describe("organization.member.added", {"object": MEMBER}, {})
    assert sentence.text == f"{GRACE} added to organization {STARK}"
    assert sentence.mentions == (Mention("user", GRACE, GRACE), Mention("organization", STARK, STARK))
    assert describe("group.role.deleted", {"object": {"group": {}}}, {}).text == "group.role.deleted"
    assert describe("user.created", {}, {}).text == "user.created (no object in data)"


def test_stored_events_get_their_sentences_and_stay_searchable_by_id(tmp_path):
    path = tmp_path / "demo.sqlite3"
    writer = StoreWriter(path)
    rows = [*KNOWN, t.row("group.role.deleted", {"group": {"id": HR}, "role": {"id": SUPPORT}})]
    writer.commit_sync(Batch(events=rows, cursor="c"))
    writer.index_all_sync()
    writer.close()
    with EventReader(path) as reader:
        (hit,) = reader.page(EventFilter(text=SUPPORT, types=frozenset({"group.role.deleted"})))
        assert SUPPORT in hit.summary  # the stored one-line summary keeps ids: full-text search finds them
    with DirectoryReader(path) as directory:
        sentences = describe_stored(directory, [hit.seq, 1])
    assert sentences[hit.seq].text == "role support removed from group hr-8849"
    assert sentences[1].text == "user grace.hopper@example.com created"


def test_connections_read_by_name_and_strategy_once_a_sign_up_went_through_them(tmp_path):
    """`organization.connection.*` carries the connection's id alone: the name and strategy come from the
    directory, which learned them from a sign-up's `data.context.connection`; until then the id stands in."""
    from helpers.entity_events import T0, envelope_row
    from tenant_events.entities.state_text import title

    saml = {"id": SSO, "name": "acme-saml", "strategy": "samlp"}
    sign_up = {
        "object": t.user(GRACE, "grace.hopper@example.com"),
        "context": {"tenant": {"id": "ten_x"}, "connection": saml},
    }
    path = tmp_path / "demo.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[*KNOWN, envelope_row("user.created", sign_up, T0, 99)], cursor="c"))
    writer.close()
    added = {"organization": {"id": STARK}, "connection": {"id": SSO}}
    member = {"group": {"id": HR}, "member": {"member_type": "connection", "id": "m", "connection_id": SSO}}
    with DirectoryReader(path) as directory:
        said = describe_all(
            [
                ("organization.connection.added", {"object": added}),
                ("group.member.added", {"object": member}),
                (
                    "organization.connection.removed",
                    {"object": {**added, "connection": {"id": "con_unknown00000001"}}},
                ),
            ],
            directory,
        )
        known = directory.entity("connection", SSO)
    assert [s.text for s in said] == [
        "connection acme-saml (samlp) added to organization Stark",
        "connection acme-saml (samlp) added to group hr-8849",
        "connection con_unknown00000001 removed from organization Stark",
    ]
    assert said[0].mentions[0] == Mention("connection", SSO, "acme-saml (samlp)")  # the id one hover away
    assert known is not None and title(known) == f"connection acme-saml (samlp) ({SSO})"
    # the sign-up itself names the connection it went through: a connection's timeline holds it
    from tenant_events.wire.references import names

    assert names("user.created", sign_up, "connection", SSO)


@pytest.mark.parametrize("indexed", [True, False])
def test_stored_events_name_what_was_then_and_say_what_an_update_linked(tmp_path, indexed):
    """An organization renamed after an event is named as it was at that event (the table, the inbox and the
    alert's message all say the same name for one event); a user update that adds an identity says which. The
    earlier state is found through the full-text index, and in the newest rows the indexer has not reached."""
    u = Tenant()
    google = {"connection": "google-oauth2", "provider": "google-oauth2", "user_id": "1077", "isSocial": True}
    db = {"connection": "Username-Password-Authentication", "provider": "auth0", "user_id": "abc"}
    grace = {**u.user(GRACE, "grace.hopper@example.com"), "identities": [db]}
    rows = [
        u.row("user.created", grace),
        u.row("organization.created", u.org(STARK, "stark", "Acme Cloud")),
        u.row("organization.member.added", MEMBER),  # 3: under its first name
        u.row("organization.updated", u.org(STARK, "stark", "Acme Mobility")),
        u.row("organization.member.deleted", MEMBER),  # 5: under its second
        u.row("organization.updated", u.org(STARK, "stark", "Acme Logistics")),
        u.row("user.updated", {**grace, "identities": [db, google]}),  # 7: an account link
        u.row("user.updated", {**grace, "identities": [db, google], "logins_count": 2}),  # 8: a log-in
    ]
    path = tmp_path / "demo.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=rows, cursor="c"))
    if indexed:
        writer.index_all_sync()
    writer.close()
    with DirectoryReader(path) as directory:
        said = describe_stored(directory, range(1, 9))
    assert said[3].text == "grace.hopper@example.com added to organization Acme Cloud"
    assert said[5].text == "grace.hopper@example.com removed from organization Acme Mobility"
    assert said[6].text == "organization Acme Logistics updated"
    assert said[7].text == "identity google-oauth2 linked to user grace.hopper@example.com"
    assert said[7].mentions == (Mention("user", GRACE, "grace.hopper@example.com"),)
    assert said[8].text == "user grace.hopper@example.com updated"  # nothing linked by a log-in
    # a service that sends the previous object: an unlink is said too, without a lookup
    unlinked = {
        "object": {**grace, "identities": [db]},
        "previous_object": {**grace, "identities": [db, google]},
    }
    assert (
        describe("user.updated", unlinked, {}).text
        == "identity google-oauth2 unlinked from user grace.hopper@example.com"
    )


class OpenedAgainMeanwhile:
    """A directory that cannot be read the first `times` calls (its database being opened again)."""

    def __init__(self, directory: DirectoryReader, times: int) -> None:
        self.directory, self.times = directory, times

    def _maybe_refuse(self) -> None:
        if self.times > 0:
            self.times -= 1
            raise StorageError("acme.sqlite3-wal was removed", "try again in a moment")

    def event_data(self, seqs):
        self._maybe_refuse()
        return self.directory.event_data(seqs)

    def entities(self, keys):
        return self.directory.entities(keys)

    def watermark(self):
        return self.directory.watermark()


def test_names_that_could_not_be_read_while_the_store_was_opened_again_come_a_moment_later(tmp_path):
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(Batch(events=KNOWN, cursor="c1"))
    writer.close()
    with EventReader(db) as reader, DirectoryReader(db) as directory:
        rows = reader.page_before(EventFilter(), None, 10)
        names = PageNames(OpenedAgainMeanwhile(directory, times=2))
        ready: list[bool] = []
        names.on_ready = lambda: ready.append(True)

        async def read_a_page() -> None:
            names.page_read(rows)
            assert names._task is not None
            await names._task

        asyncio.run(asyncio.wait_for(read_a_page(), 60))
        assert ready == [True]
        assert all(names.sentence(e.seq) is not None for e in rows)
        assert "grace.hopper@example.com" in names.text(rows[-1])


def test_rows_described_before_the_directory_reached_them_are_named_once_it_has(tmp_path):
    """A catch-up batch (a backlog, the events a paused stream fetches again) is put into the directory later, by
    the indexer; rows read meanwhile are said with raw ids. Once the directory has reached them they are said
    again with names, not left with ids for as long as they are shown."""
    u = Tenant()
    grace = u.user(GRACE, "grace.hopper@example.com", "Grace Hopper")
    rows = [u.row("user.created", grace), u.row("organization.created", u.org(STARK, "stark", "Stark"))]
    rows += [u.row("organization.member.added", MEMBER) for _ in range(60)]  # more than a live batch
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(Batch(events=rows, cursor="c1"))
    writer.close()  # before its idle indexing: the directory has not reached the batch
    with EventReader(db) as reader, DirectoryReader(db) as directory:
        assert directory.watermark() == 0
        shown = reader.page_before(EventFilter(), None, 10)
        names = PageNames(directory)

        async def read_then_catch_up() -> None:
            names.page_read(shown)
            await asyncio.sleep(0.2)  # described once, with ids: the directory is behind
            again = StoreWriter(db)
            try:
                await asyncio.to_thread(again.index_all_sync)  # the indexer brings the directory up
            finally:
                again.close()
            while names._task is not None:
                await names._task

        asyncio.run(asyncio.wait_for(read_then_catch_up(), 60))
        assert all("grace.hopper@example.com" in names.text(e) for e in shown), [names.text(e) for e in shown]


class IndexedSlowly:
    """A directory whose indexer moves one row per look: it knows an entity once it has passed its creation."""

    def __init__(self, directory: DirectoryReader, created_at: int) -> None:
        self.directory, self.created_at, self.upto = directory, created_at, 0

    def event_data(self, seqs):
        return self.directory.event_data(seqs)

    def entities(self, keys):
        return self.directory.entities(keys) if self.upto >= self.created_at else {}

    def objects_of(self, kind, entity_id):
        return self.directory.objects_of(kind, entity_id)

    def watermark(self):
        self.upto += 1
        return min(self.upto, self.directory.watermark())


def test_rows_wait_for_their_names_for_as_long_as_the_directory_keeps_moving(tmp_path):
    """A long catch-up on a busy machine: the indexer takes many more tries than the give-up count to reach the
    rows shown, yet it never stops moving, so the rows are said again with names once it has."""
    u = Tenant()
    rows = [u.row("organization.created", u.org(STARK, "stark", "Stark")) for _ in range(25)]
    rows.append(u.row("user.created", u.user(GRACE, "grace.hopper@example.com", "Grace Hopper")))  # seq 26
    rows += [u.row("organization.member.added", MEMBER) for _ in range(5)]
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    writer.commit_sync(Batch(events=rows, cursor="c1"))
    writer.index_all_sync()
    writer.close()
    with EventReader(db) as reader, DirectoryReader(db) as directory:
        shown = [e for e in reader.page_before(EventFilter(), None, 10) if e.seq >= 26]
        assert len(shown) == 6
        names = PageNames(IndexedSlowly(directory, created_at=26), retry_s=0.001, retries=3)

        async def read_a_page() -> None:
            names.page_read(shown)
            while names._task is not None:
                await names._task

        asyncio.run(asyncio.wait_for(read_a_page(), 60))
        assert all("grace.hopper@example.com" in names.text(e) for e in shown), [names.text(e) for e in shown]
