"""The archive's counts per hour and type and its kept seqs (store/archive_tally.py, archive_reader.py) answer as a
single-tier store does where they are easiest to get wrong: buckets that are not whole hours, ranges that cut a
file, files of an earlier writer (no tally rows) beside new ones in one year, a month in several files and its
merge, and one reader asked again after a move and a merge changed the files under it."""

from __future__ import annotations

import itertools
import random
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.archive_pairs import strip_tallies
from helpers.history import history
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_layout import TOKENS_SUFFIX, folder_of, tokens_name
from tenant_events.store.reader import EventReader
from tenant_events.store.writer import Batch, StoreWriter
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention

DAY = 86400.0
TYPES = ("user.created", "user.updated", "organization.member.added", "group.member.added", "user.deleted")
SIZES = (60, 1800, 3600, 5400, 3 * 3600, 86400, 7 * 86400)  # seconds: below, at and across whole hours
WORDS = (EventFilter(text="example"), EventFilter(query="email:example OR org:acme"))


def _fill(path: Path, rows: list) -> StoreWriter:  # type: ignore[type-arg]
    writer = StoreWriter(path)
    for at in range(0, len(rows), 400):
        writer.commit_sync(Batch(events=rows[at : at + 400]))
    writer.index_all_sync()
    return writer


def _keep(writer: StoreWriter, days: float, now: float, move_rows: int) -> None:
    keep(writer, Retention(keep_live_days=days, settle_seconds=0), now, move_rows=move_rows)
    writer.index_all_sync()


def _type_filters(rng: random.Random) -> list[EventFilter]:
    return [
        EventFilter(),
        EventFilter(include_test=False),
        EventFilter(types=frozenset(rng.sample(TYPES, rng.randint(1, 3)))),
        EventFilter(types=frozenset(rng.sample(TYPES, 1)), include_test=rng.random() < 0.5),
    ]


def _windows(rng: random.Random, rows: list) -> list[EventFilter]:  # type: ignore[type-arg]
    """Filters of types with a time window that cuts hours (10:30 to 11:15 of some archived day)."""
    hour = (rows[len(rows) // 4].time_ms // 3_600_000) * 3600
    since = datetime.fromtimestamp(hour + 1800, UTC)
    until = datetime.fromtimestamp(hour + 3600 * rng.randint(1, 30) + 900, UTC)
    return [
        EventFilter(types=frozenset(rng.sample(TYPES, 2)), since=since, until=until),
        EventFilter(since=since, include_test=False),
        EventFilter(until=until),
    ]


def _answers(reader: EventReader, f: EventFilter, cuts: list[int]) -> dict[str, object]:
    out: dict[str, object] = {"count": reader.count(f), "by type": reader.counts_by_type(f)}
    for size in SIZES:
        out[f"histogram {size}"] = reader.histogram(f, size)
    for low, high in itertools.pairwise(cuts):
        out[f"count {low}..{high}"] = reader.count(f, min_seq=low, max_seq=high)
        out[f"count ..{high}"] = reader.count(f, max_seq=high)
        out[f"count {low}.."] = reader.count(f, min_seq=low)
    out["span"] = reader.time_span(f)
    out["count again"] = reader.count(f)
    return out


@pytest.mark.timeout(900)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(1, 10_000),
    n=st.integers(400, 1200),
    days=st.floats(20, 120),
    move_rows=st.sampled_from([60, 170, 100_000]),
    old=st.floats(0, 1),
)
def test_tallies_beside_old_files_answer_as_one_store(tmp_path_factory, seed, n, days, move_rows, old):
    """Some files' tally rows taken away (an earlier writer's files in the same year as new ones): every count,
    per-type count and histogram (buckets under, at and across whole hours), whole and over seq ranges that cut
    files, is the single-tier store's."""
    tmp = tmp_path_factory.mktemp("old")
    rows = history(n, time.time() - days * DAY, days * DAY / n, seed)
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    _fill(one, rows).close()
    writer = _fill(two, rows)
    try:
        _keep(writer, 3, time.time(), move_rows)
    finally:
        writer.close()
    rng = random.Random(seed)
    for tokens in sorted(folder_of(two).glob(f"*{TOKENS_SUFFIX}")):
        if rng.random() < old:
            strip_tallies(tokens)
    with EventReader(one) as a, EventReader(two) as b:
        upto = b.archived_upto()
        assert upto > 0
        cuts = sorted({1, *rng.sample(range(1, n), 4), upto})
        for f in [*_type_filters(rng), *WORDS, *_windows(rng, rows)]:
            assert _answers(a, f, cuts) == _answers(b, f, cuts), f


@pytest.mark.timeout(900)
def test_one_reader_asked_again_after_a_move_and_a_merge(tmp_path):
    """A reader that counted (and so read the tallies and kept a filter's seqs) is asked the same questions
    after a move added files to a month and a merge replaced them: it answers as the single-tier store."""
    now = time.time()
    rows = history(1400, now - 80 * DAY, 80 * DAY / 1400, 11)
    one, two = tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"
    _fill(one, rows).close()
    writer = _fill(two, rows)
    rng = random.Random(5)
    filters = [*_type_filters(rng), *WORDS]
    try:
        _keep(writer, 40, now, 150)
        with EventReader(one) as a, EventReader(two) as b:
            for step, (days, at) in enumerate(((40, now), (20, now), (5, now), (5, now + 40 * DAY))):
                if step:
                    _keep(writer, days, at, 150)
                upto = b.archived_upto()
                cuts = [1, upto // 2, upto, upto + 50]
                for f in filters:
                    assert _answers(a, f, cuts) == _answers(b, f, cuts), (step, f)
    finally:
        writer.close()


def _read_as_before(path: Path, tmp: Path) -> Path:
    """A copy of the store whose token files hold no tally rows: its answers are read from the events files."""
    copy = tmp / "before" / path.name
    copy.parent.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if (found := path.with_name(path.name + suffix)).exists():
            shutil.copy(found, copy.with_name(copy.name + suffix))
    shutil.copytree(folder_of(path), folder_of(copy))
    for tokens in folder_of(copy).glob(f"*{TOKENS_SUFFIX}"):
        strip_tallies(tokens)
    return copy


@pytest.mark.timeout(900)
def test_one_reader_asked_again_after_retention_dropped_files(tmp_path):
    """A reader that counted over every archived month is asked again after the archive's retention let its
    oldest months go: it answers as a reader of the files left, read from their events."""
    now = time.time()
    rows = history(1200, now - 100 * DAY, 100 * DAY / 1200, 13)
    two = tmp_path / "two.sqlite3"
    writer = _fill(two, rows)
    rng = random.Random(8)
    filters = [*_type_filters(rng), *WORDS]
    try:
        _keep(writer, 5, now, 200)
        with EventReader(two) as b:
            upto = b.archived_upto()
            cuts = [1, upto // 2, upto]
            before = {f: _answers(b, f, cuts) for f in filters}
            keep(writer, Retention(keep_live_days=5, keep_archive_days=40, settle_seconds=0), now)
            writer.index_all_sync()
            assert b.count() < before[EventFilter()]["count"]  # months let go
            with EventReader(_read_as_before(two, tmp_path)) as c:
                for f in filters:
                    assert _answers(b, f, cuts) == _answers(c, f, cuts), f
    finally:
        writer.close()


@pytest.mark.timeout(900)
def test_a_readers_tallies_hold_only_the_files_it_may_still_read(tmp_path):
    """A window's reader lives for weeks while the keeper moves a day at a time, merges each month's files and
    lets the oldest go: the tally rows it read into its cursor go with the files the catalog no longer lists, so
    that they do not grow by a month's rows (about 26,000 in the 30M-event year) at every merge."""
    start = time.time() - 60 * DAY
    rows = history(1500, start, 60 * DAY / 1500, 17)
    two = tmp_path / "two.sqlite3"
    writer = _fill(two, rows)
    ever: set[str] = set()
    try:
        with EventReader(two) as b:
            for day in range(10, 60, 2):
                now = start + day * DAY
                keep(writer, Retention(keep_live_days=1, keep_archive_days=6, settle_seconds=0), now)
                writer.index_all_sync()
                b.count(EventFilter(include_test=False))
                ever |= {a.name for a in b.archive_snapshot().files}
            listed = {a.name for a in b.archive_snapshot().files}
            assert ever - listed, "no file left the catalog: nothing tested"
            # a tally row names its token file
            paths = {str(folder_of(two) / tokens_name(name)) for name in listed}
            held = {str(n) for (n,) in b.archive._run("SELECT DISTINCT name FROM tallies")}
            assert held and held <= paths, sorted(held - paths)
    finally:
        writer.close()
