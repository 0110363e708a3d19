"""Two tiers answer as one (test_tiers_agree.py's random histories and filters) when some archive files are an
earlier writer's (their token files without the counts per hour and type, archive_tally.py) and the rest new:
a year of both, read by one reader that keeps a filter's seqs between its questions."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.archive_pairs import random_pair, strip_tallies
from store.test_tiers_agree import HISTORIES, _answers, _filter, _values
from tenant_events.store import EventReader, archive_candidates, archive_reader
from tenant_events.store.archive_candidates import FEW_CANDIDATES
from tenant_events.store.archive_layout import TOKENS_SUFFIX, folder_of
from tenant_events.store.archive_matches import MOST_KEPT, MOST_SEQS
from tenant_events.values.events import EventFilter


@pytest.mark.timeout(900)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    **HISTORIES,
    old=st.floats(0, 1),
    few=st.sampled_from([FEW_CANDIDATES, 3]),
    kept=st.sampled_from([(MOST_SEQS, MOST_KEPT), (5, MOST_KEPT), (MOST_SEQS, 5), (5, 5)]),
)
def test_reads_over_old_and_tallied_files_answer_as_one_store(
    tmp_path_factory, monkeypatch, seed, n, days, keep_days, move_rows, old, few, kept
):
    """`few`: past 3 candidates a word's or a value's are counted from the token files (their distinct seqs),
    so most filters take that way; `kept`: the most seqs kept, and the most candidate rows kept with their time
    and type."""
    monkeypatch.setattr(archive_candidates, "FEW_CANDIDATES", few)
    monkeypatch.setattr(archive_reader, "MOST_SEQS", kept[0])
    monkeypatch.setattr(archive_reader, "MOST_KEPT", kept[1])
    one, two = random_pair(tmp_path_factory.mktemp("tiers"), n, days, seed, keep_days, move_rows)
    rng = random.Random(seed)
    for tokens in sorted(folder_of(two).glob(f"*{TOKENS_SUFFIX}")):
        if rng.random() < old:
            strip_tallies(tokens)
    with EventReader(one) as a, EventReader(two) as b:
        head = a.page_before(EventFilter(), None, 1)[0].seq
        newest = datetime.fromisoformat(a.get(head).time.replace("Z", "+00:00")).astimezone(UTC)  # type: ignore[union-attr]
        values = _values(a, rng)
        for k in range(8):
            f = _filter(rng, values, newest)
            if k % 2:  # a filter of types alone, which the counts per hour and type answer
                f = EventFilter(types=f.types, include_test=f.include_test)
            assert _answers(a, f, head, seed + k) == _answers(b, f, head, seed + k), f
