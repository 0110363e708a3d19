"""The entity directory keeps the tenant as it is and the live tier's days, not every entity and link ever seen:
as simulated days pass, the links that ended and the entities deleted before the live cutoff leave the live file
for the archive folder (store/directory_settle.py), and every read of the directory still answers exactly as a
store that kept the whole directory live does: names of entities seen only in the archive, an entity's state
with its ended links, a search by name or e-mail, the access review's names."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from helpers.entity_events import T0, Tenant
from helpers.tenant_days import state_seen, tenant_days
from tenant_events.store import Batch, EventRow, StoreWriter, duck
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.archive_keeper import keep
from tenant_events.store.directory import Rel
from tenant_events.store.directory_settled import listed, settled_point
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.entity_state import ended_sql
from tenant_events.store.reindex import reindex
from tenant_events.values.retention import Retention

DAY = 86400.0
DAYS, KEEP_LIVE, PER_DAY = 36, 4, 160


def _days(seed: int = 7) -> Iterator[tuple[float, list[EventRow]]]:
    return tenant_days(DAYS, PER_DAY, seed)


def _live_rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("entities", "links"))
    finally:
        conn.close()


def test_the_live_directory_stays_bounded_and_every_read_answers_the_same(tmp_path: Path):
    settled_db, whole_db = tmp_path / "settled.sqlite3", tmp_path / "whole.sqlite3"
    settled, whole = StoreWriter(settled_db), StoreWriter(whole_db)
    policy = Retention(keep_live_days=KEEP_LIVE, settle_seconds=0)
    grew: dict[int, tuple[int, int]] = {}  # day → the settled file's directory rows, the whole's
    try:
        for day, (end, rows) in enumerate(_days()):
            for writer in (settled, whole):
                for at in range(0, len(rows), 500):
                    writer.commit_sync(Batch(events=rows[at : at + 500], cursor=str(day * 10_000 + at)))
                writer.index_all_sync()  # (the idle-time indexer: full-text, directory, access history)
            done = keep(settled, policy, now=end)
            grew[day] = (_live_rows(settled_db), _live_rows(whole_db))
            assert day < KEEP_LIVE + 2 or done.directory_settled > 0, f"day {day}: nothing settled"
    finally:
        settled.close()
        whole.close()

    conn = sqlite3.connect(settled_db)
    try:
        point = settled_point(conn)
        assert point > 0
        ended_before = sum(1 for rel in Rel for row in conn.execute(ended_sql(rel)) if row[6] < point)
        assert ended_before == 0, "links that ended before the point are still live"
        files = dict(conn.execute("SELECT part, rows FROM directory_files").fetchall())
        assert files["entities"] > 0 and files["links"] > 0, files
    finally:
        conn.close()
    # Bounded: the whole directory grows with the days; the settled file's keeps the tenant as it is (which the
    # simulated tenant grows, as its directory does) and the live days, well under the whole each day.
    half, last = DAYS // 2, DAYS - 1
    assert grew[last][1] > 1.5 * grew[half][1], grew
    assert all(kept < 0.7 * peer for kept, peer in list(grew.values())[half:]), grew

    _same_answers(settled_db, whole_db)
    reindex(
        settled_db
    )  # built again whole from both tiers: the settled files forgotten, the answers the same
    assert _live_rows(settled_db) == _live_rows(whole_db)
    _same_answers(settled_db, whole_db)


def _same_answers(settled_db: Path, whole_db: Path) -> None:
    conn = sqlite3.connect(whole_db)
    try:
        keys = [(str(k), str(i)) for k, i in conn.execute("SELECT kind, id FROM entities ORDER BY kind, id")]
        users = conn.execute("SELECT id, name, email FROM entities WHERE kind = 'user'").fetchall()
        deleted = conn.execute(
            "SELECT count(*) FROM entities WHERE kind = 'user' AND deleted_at > coalesce(created_at, -1)"
        ).fetchone()[0]
    finally:
        conn.close()
    assert deleted > 20, "the simulated tenant deletes users: their names must resolve from the settled past"
    rng = random.Random(3)
    with DirectoryReader(settled_db) as a, DirectoryReader(whole_db) as b:
        assert a.entities(keys) == b.entities(keys)
        for kind, entity_id in rng.sample(keys, min(len(keys), 250)):
            assert a.entity(kind, entity_id) == b.entity(kind, entity_id)
            assert state_seen(a, kind, entity_id) == state_seen(b, kind, entity_id), (kind, entity_id)
        for user_id, name, email in rng.sample(users, min(len(users), 60)):
            for text in (user_id, name, email, str(email).upper()):
                if text:
                    assert a.find("user", text) == b.find("user", text), text
            if email:
                assert a.by_email(email) == b.by_email(email)
    with AccessReader(settled_db) as a_names, AccessReader(whole_db) as b_names:
        assert a_names.entities(keys) == b_names.entities(keys)


def _spans(path: Path, group: str, user: str) -> list[tuple[int, int]]:
    """(added, ended) stamps of a group membership's rows in the settled links file."""
    conn = sqlite3.connect(path)
    try:
        links = listed(conn, path).links
    finally:
        conn.close()
    if links is None:
        return []
    cur = duck.cursor()
    try:
        return sorted(
            cur.execute(
                "SELECT added_at, ended FROM read_parquet(?) WHERE rel = ? AND a = ? AND b = ?",
                [str(links), int(Rel.GROUP_MEMBER), group, user],
            ).fetchall()
        )
    finally:
        cur.close()


def _live_links(path: Path, group: str, user: str) -> int:
    """A group membership's rows in the live file."""
    conn = sqlite3.connect(path)
    try:
        sql = "SELECT count(*) FROM links WHERE rel = ? AND a = ? AND b = ?"
        return int(conn.execute(sql, (int(Rel.GROUP_MEMBER), group, user)).fetchone()[0])
    finally:
        conn.close()


def test_a_link_made_again_after_it_was_settled_reads_as_the_whole_directory_says(tmp_path: Path):
    """A membership ended and settled into the archive folder, made again, ended and settled again, made once
    more: at every step the group's and the member's states say what a store that kept its whole directory live
    says, which keeps one row a link (its newest add): the link once, never its settled span beside it."""
    t = Tenant()
    user, group = "auth0|5ee1a5ee1a5ee1", "grp_00000000000000ops"
    member = {"group": t.group(group, "ops"), "member": {"member_type": "user", "id": user}}
    settled_db, whole_db = tmp_path / "settled.sqlite3", tmp_path / "whole.sqlite3"
    settled, whole = StoreWriter(settled_db), StoreWriter(whole_db)
    policy = Retention(keep_live_days=KEEP_LIVE, settle_seconds=0)

    def on(day: float, *events: tuple[str, dict[str, object]]) -> None:
        at = T0.timestamp() + day * DAY
        rows = [
            t.row(kind, obj, at=day * DAY + i)._replace(received_at=at + i)
            for i, (kind, obj) in enumerate(events)
        ]
        for writer in (settled, whole):
            writer.commit_sync(Batch(events=rows, cursor=f"day {day}"))
            writer.index_all_sync()

    def upkeep(day: float) -> int:
        return keep(settled, policy, now=T0.timestamp() + day * DAY).directory_settled

    def same(holds: bool) -> None:
        with DirectoryReader(settled_db) as a, DirectoryReader(whole_db) as b:
            for kind, entity_id in (("group", group), ("user", user)):
                assert state_seen(a, kind, entity_id) == state_seen(b, kind, entity_id), (kind, entity_id)
            state = a.state("group", group)
            assert state is not None
            links = [link for link in state.links if user in {e.id for e in link.ends}]
            assert len(links) == 1 and (links[0].until_ms is None) == holds, links

    try:
        on(0, ("user.created", t.user(user, "ada@example.com")), ("group.created", t.group(group, "ops")))
        on(0.5, ("group.member.added", member))
        on(1, ("group.member.deleted", member))
        assert upkeep(10) > 0
        # settled: out of the live file, into the archive folder
        assert (_live_links(settled_db, group, user), len(_spans(settled_db, group, user))) == (0, 1)
        same(holds=False)
        # made again: a live row, its settled span in the archive folder
        on(11, ("group.member.added", member))
        assert (_live_links(settled_db, group, user), len(_spans(settled_db, group, user))) == (1, 1)
        same(holds=True)
        on(12, ("group.member.deleted", member))
        assert upkeep(20) > 0
        # settled twice: both spans in the archive folder
        assert (_live_links(settled_db, group, user), len(_spans(settled_db, group, user))) == (0, 2)
        same(holds=False)
        on(21, ("group.member.added", member))  # and made once more
        assert (_live_links(settled_db, group, user), len(_spans(settled_db, group, user))) == (1, 2)
        same(holds=True)
    finally:
        settled.close()
        whole.close()
