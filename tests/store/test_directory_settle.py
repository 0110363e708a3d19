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

from helpers.tenant_days import state_seen, tenant_days
from tenant_events.store import Batch, EventRow, StoreWriter
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.archive_keeper import keep
from tenant_events.store.directory import Rel
from tenant_events.store.directory_settled import settled_point
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
