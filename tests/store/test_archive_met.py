"""Many candidates that are all matches (a word's, a field value's, an OR of them: store/archive_met.py) are
counted by a bit a seq, never made distinct in a hash table of them all, and met with each events file by the
seqs of its own range; the answers are those of a store that never archived, whatever repeats the lookups list."""

from __future__ import annotations

import re

import pytest

from helpers.archive_pairs import Statements, random_pair
from tenant_events.store import archive_reader
from tenant_events.store.reader import EventReader
from tenant_events.values.events import EventFilter

# a word, a prefix whose terms list an event more than once, an OR whose sides share events
FILTERS = (
    EventFilter(text="example"),
    EventFilter(text="e"),
    EventFilter(query="email:example OR org:acme"),
    EventFilter(query="email:example OR email:example"),
)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kept", [(10, 10), (4_000_000, 100), (4_000_000, 2_000_000)])
def test_many_matches_are_counted_by_bits_and_met_file_by_file(tmp_path, monkeypatch, kept):
    """Counts (whole, of a range, again from the kept seqs), histograms, spans and per-type counts as a
    single-tier store's; no statement makes the candidates distinct or unites an OR's sides into a set, and a
    scan of the events files names each file's own range of the seqs."""
    monkeypatch.setattr(archive_reader, "MOST_SEQS", kept[0])
    monkeypatch.setattr(archive_reader, "MOST_KEPT", kept[1])
    one, two = random_pair(tmp_path / "small", 1600, 75, 7, 2, 150)
    statements = Statements(monkeypatch)
    with EventReader(one) as a, EventReader(two) as b:
        upto = b.archived_upto()
        files = len(list((two.parent / f"{two.stem}.archive").glob("*.tokens.parquet")))
        assert files > 1
        for f in FILTERS:
            assert a.count(f) > 256, f
            statements.seen.clear()
            assert b.count(f) == a.count(f), f
            assert b.count(f, min_seq=upto // 3, max_seq=upto) == a.count(
                f, min_seq=upto // 3, max_seq=upto
            ), f
            assert b.histogram(f, 86400) == a.histogram(f, 86400), f
            assert b.time_span(f) == a.time_span(f), f
            assert b.counts_by_type(f) == a.counts_by_type(f), f
            assert b.count(f, min_seq=5, max_seq=900) == a.count(f, min_seq=5, max_seq=900), f
            assert [s for s in statements.seen if re.search(r"\bDISTINCT seq\b", s)] == [], f
            assert [s for s in statements.seen if re.search(r"\) UNION \(|\bUNION SELECT", s)] == [], f
            assert any("bitstring_agg" in s for s in statements.seen), f
            scans = [s for s in statements.seen if re.search(r"\bFROM ev\b", s)]
            assert scans, f
            for scan in scans:  # every events file read is met with the seqs of its own range
                assert scan.count("read_parquet(") == scan.count(" BETWEEN ") >= 1, scan[:300]


@pytest.mark.timeout(600)
def test_a_count_of_fewer_matches_than_are_kept_reads_no_events_file(tmp_path, monkeypatch):
    """A word's or a field value's count, with fewer matches than a reader keeps, is their distinct number: no
    events file is read until a question needs their rows (the span, the histogram), which then keeps them."""
    one, two = random_pair(tmp_path / "small", 1600, 75, 7, 2, 150)
    statements = Statements(monkeypatch)
    with EventReader(one) as a, EventReader(two) as b:
        for f in FILTERS:
            statements.seen.clear()
            assert b.count(f) == a.count(f), f
            assert b.count(f, min_seq=5, max_seq=900) == a.count(f, min_seq=5, max_seq=900), f
            assert [s for s in statements.seen if re.search(r"\bFROM ev\b", s)] == [], f
            assert b.time_span(f) == a.time_span(f), f
            statements.seen.clear()
            assert b.histogram(f, 86400) == a.histogram(f, 86400), f
            assert b.counts_by_type(f) == a.counts_by_type(f), f
            assert [s for s in statements.seen if re.search(r"\bFROM (ev|tok)\b", s)] == [], f
