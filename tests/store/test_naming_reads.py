"""Naming a page's entities over the archive tier reads only the archive files that hold their versions: a year's
archive is a dozen monthly files, and a page of the newest rows names entities whose versions lie in a file or two,
where every file's events were read (~1.6 s of DuckDB's CPU a page, competing with the window). The answer is the
one entity-by-entity reads give."""

from __future__ import annotations

from pathlib import Path

from helpers.entity_events import T0, Tenant
from tenant_events.entities.sentences import NamesThen, describe_stored
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.archive_keeper import keep
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.values.retention import Retention

MONTH = 31 * 86400
LATER = T0.timestamp() + 400 * 86400  # every event is old enough to move


def _events_files(sql: str) -> int:
    """How many archive files of events (not of token lists) a statement reads."""
    return sum(
        1 for part in sql.split("'") if part.endswith(".parquet") and not part.endswith(".tokens.parquet")
    )


def test_naming_entities_reads_the_events_of_the_files_holding_their_versions_only(
    tmp_path: Path, archive_statements: list[str]
) -> None:
    t = Tenant()
    rows = []
    for month in range(4):
        for i in range(20):
            at = month * MONTH + i * 60
            rows.append(t.row("organization.created", t.org(f"org_m{month}x{i}", f"old-{month}-{i}"), at=at))
            rows.append(
                t.row("organization.updated", t.org(f"org_m{month}x{i}", f"new-{month}-{i}"), at=at + 1)
            )
    path = tmp_path / "t.sqlite3"
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=rows, cursor="1"))
        writer.index_all_sync()
        assert keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER).moved == len(rows)
    finally:
        writer.close()
    keys = [("organization", f"org_m3x{i}") for i in range(5)]
    directory = DirectoryReader(path)
    try:
        archive_statements.clear()
        many = directory.objects_of_many(keys)
        read = list(archive_statements)
        singly = {key: directory.objects_of(*key) for key in keys}
    finally:
        directory.close()
    assert many == singly
    assert all(len(pairs) == 2 for pairs in many.values())
    files = [_events_files(sql) for sql in read]
    assert max(files) == 1, read  # the newest month's file: the three older ones hold none of their versions
    assert len(read) <= 2, read


DAY = 86400


def _renamed_orgs(path: Path) -> list[int]:
    """Two organizations created long ago (archived), renamed lately, a user added to each, renamed again:
    the seqs of the two member events (live), which name them as the late rename left them."""
    t = Tenant()
    grace = {"user_id": "auth0|grace0000000001"}
    old = [t.row("user.created", t.user(grace["user_id"], "grace@example.com"), at=0)]
    late = []
    for n, oid in enumerate(("org_alpha00000001", "org_bravo00000001")):
        old.append(t.row("organization.created", t.org(oid, f"o{n}", f"First{n}"), at=n + 1))
        late.append(t.row("organization.updated", t.org(oid, f"o{n}", f"Then{n}"), at=390 * DAY + n))
        late.append(
            t.row("organization.member.added", {"organization": {"id": oid}, "user": grace}, at=391 * DAY + n)
        )
        late.append(t.row("organization.updated", t.org(oid, f"o{n}", f"Now{n}"), at=392 * DAY + n))
    writer = StoreWriter(path)
    try:
        writer.commit_sync(Batch(events=old, cursor="1"))
        writer.index_all_sync()
        assert keep(writer, Retention(keep_live_days=30, settle_seconds=0), LATER).moved == len(old)
        writer.commit_sync(Batch(events=late, cursor="2"))
        writer.index_all_sync()
    finally:
        writer.close()
    with DirectoryReader(path) as directory:
        return sorted(
            seq for seq, p in directory.event_data(range(1, 20)).items() if p.type.endswith("added")
        )


def test_naming_a_page_reads_no_archive_for_entities_whose_names_then_are_live(
    tmp_path: Path, archive_statements: list[str]
) -> None:
    path = tmp_path / "t.sqlite3"
    added = _renamed_orgs(path)
    with DirectoryReader(path) as directory:
        archive_statements.clear()
        said = describe_stored(directory, added)
    assert [said[seq].text for seq in added] == [
        "grace@example.com added to organization Then0",
        "grace@example.com added to organization Then1",
    ]
    assert archive_statements == []  # the names at the time are the live renames': the archive is not read


def test_an_entity_read_ahead_from_a_seq_is_read_whole_when_asked_about_before_it(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    added = _renamed_orgs(path)
    keys = [("organization", "org_alpha00000001"), ("organization", "org_bravo00000001")]
    with DirectoryReader(path) as directory:
        names = NamesThen(directory)
        names.read_ahead(keys, dict(zip(keys, added, strict=True)))
        then = names.before(*keys[0], added[0])
        first = names.before(*keys[0], 3)  # (its created event, archived, is seq 2)
    assert then is not None and then["display_name"] == "Then0"
    assert first is not None and first["display_name"] == "First0"
