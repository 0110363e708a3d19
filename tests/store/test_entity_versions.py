"""An entity's versions (its created/updated events: its name at any event's time) over events the full-text
index has not reached yet, as after a catch-up the alert rules name their first alerts over: only the entity's
own kind of created/updated rows are read, not every stored event that mentions it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from helpers.entity_events import Tenant
from tenant_events.entities.sentences import NamesThen, NamesUpTo
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.entity_reader import DirectoryReader

GRACE, STARK = "auth0|3de8f2ea3c49", "org_0000000000stark"
MEMBER = {"organization": {"id": STARK}, "user": {"user_id": GRACE}}
MENTIONS = 3000
T = TypeVar("T")


def _steps(reader: DirectoryReader, call: Callable[[], T]) -> tuple[T, int]:
    """The call's result and how many thousand SQLite virtual-machine steps it took."""
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0

    reader._conn.set_progress_handler(tick, 1000)
    try:
        return call(), ticks[0]
    finally:
        reader._conn.set_progress_handler(None, 0)


def _backlog(tmp_path: Path, rows: list[Any]) -> Path:
    """A store holding `rows` as one catch-up's batch: left to the indexer, none in the full-text index yet."""
    db = tmp_path / "acme.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=rows, cursor="backlog"))
    finally:
        writer.close()
    return db


def test_an_entitys_versions_over_an_unindexed_backlog_read_its_own_kind_only(tmp_path: Path) -> None:
    t = Tenant()
    rows = [t.row("user.created", t.user(GRACE, "grace@example.com", "Grace"))]
    rows += [t.row("organization.member.added", MEMBER) for _ in range(MENTIONS)]  # each names her id
    rows.append(t.row("user.updated", t.user(GRACE, "grace.hopper@example.com", "Grace Hopper")))
    db = _backlog(tmp_path, rows)
    with DirectoryReader(db) as reader:
        versions, steps = _steps(reader, lambda: reader.objects_of("user", GRACE))
    assert [seq for seq, _obj in versions] == [1, MENTIONS + 2]
    assert [obj["email"] for _seq, obj in versions] == ["grace@example.com", "grace.hopper@example.com"]
    # Reading every mention (a substring test of each row's JSON) took 75 thousand steps here; the two rows of
    # the entity's own kind, found through the type index, take 0 (fewer than a thousand).
    assert steps <= 5, f"{steps} thousand steps to find 2 versions among {MENTIONS:,} mentions"


def test_an_entitys_versions_before_an_early_event_leave_the_backlog_after_it_unread(tmp_path: Path) -> None:
    """A catch-up names its first alerts at the time of an event early in a backlog the store already holds:
    the versions before that event are read without a substring search through every later row of the kind."""
    t = Tenant()
    rows = [t.row("user.created", t.user(GRACE, "grace@example.com", "Grace"))]
    rows.append(t.row("user.updated", t.user(GRACE, "grace.hopper@example.com", "Grace Hopper")))
    rows += [t.row("user.created", t.user(f"auth0|{n:012d}", f"u{n}@example.com")) for n in range(MENTIONS)]
    rows.append(t.row("user.updated", t.user(GRACE, "admiral@example.com", "Admiral Hopper")))
    db = _backlog(tmp_path, rows)
    with DirectoryReader(db) as reader:
        early, steps = _steps(reader, lambda: reader.objects_of("user", GRACE, before=3))
        every = reader.objects_of("user", GRACE)
        then, upto = NamesThen(reader), NamesUpTo(reader)
        for seq in (2, 3, MENTIONS + 3, MENTIONS + 4, 3):  # (a later event reads the versions again)
            assert upto.before("user", GRACE, seq) == then.before("user", GRACE, seq), seq
    assert [seq for seq, _obj in early] == [1, 2]
    assert [seq for seq, _obj in every] == [1, 2, MENTIONS + 3]
    # The whole backlog of user rows after seq 3, searched by substring, took 18 thousand steps here.
    assert steps <= 5, f"{steps} thousand steps to find 2 versions before seq 3"
