"""A phrase's candidates ruled out by the archive's pairs of tokens (store/archive_pairs.py): a candidate that holds
the phrase's tokens, that the field rows do not confirm and that lists none of its pairs is no match, with no JSON
read. Every answer stays the single-tier store's (FTS5's own phrase match) over random text planted where the
rows and the pairs could part from FTS5: inside a value, across two values side by side, in a key that is no
field's, in an array, in the event id, spelled with an escape, past ASCII; over files with pair rows, without
(as an earlier writer left them), and merged."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.archive_pairs import statements, store_rows, strip_marked
from helpers.history import history
from tenant_events.store import Batch, EventReader, EventRow, StoreWriter
from tenant_events.store import archive_candidates as candidates
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_pairs import MARK
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention

DAY = 86400.0
NOW = time.time()
WORDS = ("qzwa", "qzwb", "qzwc", "Qzwa", "QZWB", "qzwa5", "qzwbx")
# as the JSON spells them: an escaped letter stays one to FTS5 (fts_text.py), an escaped apostrophe is decoded
SEPARATORS = (
    " ",
    " ",
    "-",
    ".",
    "_",
    ", ",
    "  ",
    "/",
    "\u2014",
    "\u00e9 ",
    "\\u0071",
    "\\u0027",
    " \\u0026 ",
)
PHRASES = (
    '"qzwa qzwb"',
    '"qzwb qzwa"',
    '"qzwa qzwc"',
    '"qzwa qzwb qzwc"',
    '"qzwb qzwc qzwa"',
    '"qzwa qzwb" type:user.*',
    "qzwa-qzwb",  # free text: the last token a prefix, which the pairs leave to the JSON
    '"qzwa qzwa"',
)


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
    out = words[0]
    for word in words[1:]:
        out += rng.choice(SEPARATORS) + word
    return out


def _planted(row: EventRow, rng: random.Random) -> EventRow:
    """`row` with random text of the phrases' words in some of: a user's nickname and name (field values), the
    given and family names (in the JSON, no field's), a list of tags (strings side by side), the client's name
    (a value), the event id."""
    data = orjson.loads(row.raw)
    obj = data["event"]["data"].get("object")
    if not isinstance(obj, dict):
        return row
    spots: dict[str, str] = {}
    for key in ("nickname", "name", "given_name", "family_name"):
        if rng.random() < 0.5:
            obj[key] = spots[key] = f"@{key}@"
    if rng.random() < 0.3:
        obj["tags"] = [f"@tag{k}@" for k in range(rng.randint(1, 3))]
        spots |= {t: t for t in obj["tags"]}
    context = data["event"]["data"].setdefault("context", {})
    if isinstance(context, dict) and rng.random() < 0.4:
        context["client"] = {"name": "@client@"}
        spots["client"] = "@client@"
    raw = orjson.dumps(data).decode()
    for mark in spots.values():
        raw = raw.replace(mark, _text(rng), 1)  # as written: an escape stays an escape
    if rng.random() < 0.1:  # the event id's own tokens: its JSON keeps the id it had
        return row._replace(raw=raw, event_id=f"{row.event_id}-{_text(rng)}".replace("\\u0027", "'"))
    return row._replace(raw=raw)


def _rows(seed: int, n: int) -> list[EventRow]:
    rng = random.Random(seed)
    rows = history(n, NOW - 60 * DAY, 55 * DAY / n, seed=seed)
    return [_planted(r, rng) if rng.random() < 0.6 else r for r in rows]


def _stores_of(tmp_path: Path, rows: list[EventRow], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A store that never archives and one that keeps 3 days live, of `rows`; every count of a phrase's
    candidates takes the path of many (not named one by one in its statement)."""
    one, two = tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"
    store_rows(one, rows, None, NOW)
    store_rows(two, rows, 3, NOW)
    monkeypatch.setattr(candidates, "FEW_CANDIDATES", 2)
    return one, two


def _query(text: str) -> EventFilter:
    return EventFilter(query=text) if '"' in text else EventFilter(text=text)


def _pair(tmp: Path, seed: int, n: int, stripped: float, move_rows: int) -> tuple[Path, Path]:
    """One store all live, one with its events moved in runs of at most `move_rows` (several files a month,
    merged as the keeper merges them), a share `stripped` of its token files without pair rows."""
    rows = _rows(seed, n)
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    store_rows(one, rows, None, NOW)
    writer = StoreWriter(two)
    try:
        writer.commit_sync(Batch(events=rows))
        writer.index_all_sync()
        keep(writer, Retention(keep_live_days=3, settle_seconds=0), NOW, move_rows=move_rows)
        writer.index_all_sync()
    finally:
        writer.close()
    rng = random.Random(seed)
    for tokens in sorted((tmp / "two.archive").glob("*.tokens.parquet")):
        if rng.random() < stripped:
            strip_marked(tokens, MARK)
    return one, two


@pytest.mark.timeout(900)  # a loaded machine: the suite's 300 s is too tight for it
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(1, 10_000),
    n=st.integers(300, 700),
    stripped=st.sampled_from([0.0, 0.0, 0.5]),
    move_rows=st.sampled_from([60, 170, 100_000]),
)
def test_phrases_over_pairs_of_tokens_answer_as_one_store(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    n: int,
    stripped: float,
    move_rows: int,
) -> None:
    one, two = _pair(tmp_path_factory.mktemp("pairs"), seed, n, stripped, move_rows)
    # a few candidates make a count's path (the rows, then the pairs) as many do over a year
    monkeypatch.setattr(candidates, "FEW_CANDIDATES", 2)
    with EventReader(one) as single:
        for text in PHRASES:
            f = _query(text)
            with EventReader(two) as cold:
                assert cold.count(f) == single.count(f), text
                assert cold.histogram(f, 86400) == single.histogram(f, 86400), text
                assert cold.counts_by_type(f) == single.counts_by_type(f), text


def test_a_candidate_the_pairs_rule_out_has_no_json_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Users named "Qzwb" on a client "Dashboard (Qzwa)" hold both tokens apart, the phrase stands in other
    users' nicknames (the rows confirm those): the count reads no raw JSON with the pair rows, and reads it
    without them."""
    rows = history(600, NOW - 60 * DAY, 55 * DAY / 600, seed=3)
    out = []
    for k, row in enumerate(rows):
        data = orjson.loads(row.raw)
        obj = data["event"]["data"].get("object")
        if row.type == "user.updated" and isinstance(obj, dict):
            if k % 2:
                obj["nickname"] = "Qzwa Qzwb"
            else:
                obj["name"] = "Radia Qzwb"
                data["event"]["data"].setdefault("context", {})["client"] = {"name": "Dashboard (Qzwa)"}
            row = row._replace(raw=orjson.dumps(data).decode())
        out.append(row)
    one, two = _stores_of(tmp_path, out, monkeypatch)
    f = EventFilter(query='"qzwa qzwb" type:user.*')
    with EventReader(one) as single:
        expected = single.count(f)
        apart = single.count(EventFilter(query="qzwa qzwb type:user.*"))
    assert 0 < expected < apart - 10
    for stripped in (False, True):
        if stripped:
            for tokens in (tmp_path / "two.archive").glob("*.tokens.parquet"):
                strip_marked(tokens, MARK)
        with EventReader(two) as cold, statements(monkeypatch) as seen:
            assert cold.count(f) == expected
        json_read = any(re.search(r"\braw\b", s) for s in seen)
        assert json_read == stripped, [s for s in seen if "raw" in s]


def test_a_prefix_phrase_goes_on_with_every_word_of_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`qzwa-qzwb` (FTS5's "qzwa qzwb"*): given names "Qzwa Qzwbx" (no field's value, their pair `qzwa qzwbx`
    listed) match as the nicknames "Qzwa Qzwb" do (the rows confirm those); names "Qzwb" on a client "Dashboard
    (Qzwa)" do not, and are ruled out."""
    rows = history(600, NOW - 60 * DAY, 55 * DAY / 600, seed=4)
    out = []
    for k, row in enumerate(rows):
        data = orjson.loads(row.raw)
        obj = data["event"]["data"].get("object")
        if row.type in ("user.updated", "user.created") and isinstance(obj, dict):
            obj["nickname"] = ("Qzwa Qzwb", "Qzwbx", "x")[k % 3]  # qzwbx a word of the values
            obj["given_name"] = "Qzwa Qzwbx" if k % 3 == 2 else "x"
            if k % 3 == 1:
                data["event"]["data"].setdefault("context", {})["client"] = {"name": "Dashboard (Qzwa)"}
            row = row._replace(raw=orjson.dumps(data).decode())
        out.append(row)
    one, two = _stores_of(tmp_path, out, monkeypatch)
    f = EventFilter(text="qzwa-qzwb")
    with EventReader(one) as single, EventReader(two) as cold, statements(monkeypatch) as seen:
        expected = single.count(f)
        assert cold.count(f) == expected > 20
    assert any("pair_held" in s for s in seen)
