"""A file's counts per hour and type (store/archive_tally.py): a filter of types alone is counted, counted per type
and drawn as a histogram from them, with no events file read, and answers as a single-tier store does; files
without them (written before, or merged with such a file) are read as before."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from helpers.archive_pairs import Statements, random_pair, strip_tallies
from helpers.history import history
from tenant_events.store import archive_reader
from tenant_events.store.archive_build import write_month
from tenant_events.store.archive_layout import tokens_name
from tenant_events.store.archive_merge import merge
from tenant_events.store.reader import EventReader
from tenant_events.values.events import EventFilter

DAY = 86400.0
FILTERS = (
    EventFilter(),
    EventFilter(types=frozenset({"user.created", "group.member.added"})),
    EventFilter(include_test=False),
    EventFilter(types=frozenset({"user.updated"}), include_test=False),
)


def _answers(reader: EventReader, f: EventFilter, upto: int) -> dict[str, object]:
    return {
        "count": reader.count(f),
        "count of the archive": reader.count(f, max_seq=upto),
        "count of a range": reader.count(f, min_seq=upto // 3, max_seq=upto // 2),
        "by type": reader.counts_by_type(f),
        "hours": reader.histogram(f, 3600),
        "days": reader.histogram(f, 86400),
        "weeks": reader.histogram(f, 7 * 86400),
        "minutes": reader.histogram(f, 60),
        "span": reader.time_span(f),
    }


@pytest.mark.timeout(600)
def test_a_filter_of_types_is_answered_from_the_tallies_as_one_store(tmp_path, monkeypatch):
    """Moved in runs of 150 events (several files a month, then merged) and in one run: the same answers as a
    store that never archived, and the count, counts per type and hourly-or-longer histograms read no events
    file."""
    one, two = random_pair(tmp_path / "small", 1600, 75, 7, 2, 150)
    statements = Statements(monkeypatch)
    with EventReader(one) as a, EventReader(two) as b:
        assert b.archived_upto() > 1000
        for f in FILTERS:
            assert _answers(a, f, b.archived_upto()) == _answers(b, f, b.archived_upto()), f
            statements.seen.clear()
            b.count(f)
            b.count(f, max_seq=b.archived_upto())
            b.counts_by_type(f)
            b.histogram(f, 86400)
            b.histogram(f, 7 * 86400)
            assert statements.events_read() == [], f


def test_files_without_whole_tallies_are_read_as_before(tmp_path, monkeypatch):
    """A file written before the tallies, and a merge of one with a file that has them: the same answers as the
    files with their tallies, read from the events files."""
    rows = history(900, datetime(2026, 1, 2, tzinfo=UTC).timestamp(), 2000.0, 3)  # 21 days of January
    live = [
        (1 + i, r.event_id, r.offset, r.type, r.time, r.time_ms, r.source, r.tenant, r.purpose, None, r.raw,
         r.received_at)
        for i, r in enumerate(rows)
    ]  # fmt: skip
    answers = []
    for layout in ("tallied", "old", "merged"):
        folder = tmp_path / layout
        parts = [live[:400], live[400:]] if layout == "merged" else [live]
        built = [write_month(folder, "2026-01", part) for part in parts]
        if layout != "tallied":
            strip_tallies(folder / tokens_name(built[0].file.name))
        files = [merge(folder, [b.file for b in built]).file] if layout == "merged" else [built[0].file]
        source = _Reading(folder, files)
        statements = Statements(monkeypatch)
        answers.append(source.answers())
        read = statements.events_read()
        assert (read == []) == (layout == "tallied"), layout
        monkeypatch.undo()
    assert answers[0] == answers[1] == answers[2]


class _Reading:
    """An archive reader over files of a folder, with no database (the snapshot made here)."""

    def __init__(self, folder: Path, files: list) -> None:  # type: ignore[type-arg]
        from tenant_events.store.archive_catalog import ArchiveSnapshot
        from tenant_events.store.archive_reader import ArchiveReader

        self.reader = ArchiveReader(folder)
        self.snap = ArchiveSnapshot(max(a.last_seq for a in files), tuple(files))

    def answers(self) -> list[object]:
        out: list[object] = []
        try:
            for f in FILTERS:
                out += [
                    self.reader.count(self.snap, f, {}),
                    self.reader.counts_by_type(self.snap, f, {}),
                    sorted(self.reader.histogram(self.snap, f, {}, 86_400_000)),
                    sorted(self.reader.histogram(self.snap, f, {}, 3_600_000)),
                ]
        finally:
            self.reader.close()
        return out


@pytest.mark.timeout(600)
def test_a_count_of_a_words_or_a_fields_events_reads_no_events_file(tmp_path, monkeypatch):
    """A free-text word and a field's value with hundreds of matches, which the token files list exactly: their
    counts (whole, and of a range) are those of a store that never archived, and read only token files."""
    monkeypatch.setattr(archive_reader, "MOST_KEPT", 100)  # more matches than a reader keeps
    one, two = random_pair(tmp_path / "small", 1600, 75, 7, 2, 150)
    statements = Statements(monkeypatch)
    with EventReader(one) as a, EventReader(two) as b:
        upto = b.archived_upto()
        for f in (
            EventFilter(text="example"),
            EventFilter(query="email:example"),
            EventFilter(query="email:example OR org:acme"),
        ):
            assert a.count(f) > 256, f
            statements.seen.clear()
            assert b.count(f) == a.count(f), f
            assert b.count(f, min_seq=upto // 3, max_seq=upto) == a.count(
                f, min_seq=upto // 3, max_seq=upto
            ), f
            assert statements.events_read() == [], f


@pytest.mark.timeout(600)
@pytest.mark.parametrize("most_seqs", [10, 4_000_000])
def test_a_histogram_after_a_count_looks_no_token_up_again(tmp_path, monkeypatch, most_seqs):
    """The count keeps the matches' seqs (at most MOST_SEQS of them), and the histogram, span and per-type counts
    after it read no token file; with more, each question looks them up again. The same answers either way."""
    monkeypatch.setattr(archive_reader, "MOST_SEQS", most_seqs)
    monkeypatch.setattr(archive_reader, "MOST_KEPT", 100)  # more matches than a reader keeps
    one, two = random_pair(tmp_path / "small", 1600, 75, 7, 2, 150)
    statements = Statements(monkeypatch)
    with EventReader(one) as a, EventReader(two) as b:
        for f in (EventFilter(text="example"), EventFilter(query="email:example OR org:acme")):
            assert b.count(f) == a.count(f)
            statements.seen.clear()
            assert b.histogram(f, 86400) == a.histogram(f, 86400)
            looked_up = [s for s in statements.seen if re.search(r"\bFROM tok\b", s)]
            assert (looked_up == []) == (most_seqs > 1000), f
            assert b.time_span(f) == a.time_span(f)
            assert b.counts_by_type(f) == a.counts_by_type(f)
            assert b.count(f, min_seq=5, max_seq=900) == a.count(f, min_seq=5, max_seq=900)
