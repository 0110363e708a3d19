"""Hostile inputs for the archive's pairs of tokens (store/archive_pairs.py): a phrase's count, histogram and
counts by type over an archived store stay the single-tier store's (FTS5's own phrase match) where the writer's
tokens and FTS5's could part."""

from __future__ import annotations

import io
import itertools
import random
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from helpers.archive_pairs import statements, store_rows
from helpers.history import history
from tenant_events.store import Batch, EventReader, EventRow, StoreWriter, archive_move
from tenant_events.store import archive_candidates as candidates
from tenant_events.store.archive_build import FTS_TOKENIZER
from tenant_events.store.archive_fields import FieldRows
from tenant_events.store.archive_keeper import keep
from tenant_events.store.archive_layout import FIELD_COLUMNS
from tenant_events.store.archive_pairs import COVER, MARK, UNSURE, WORD, PairRows
from tenant_events.store.fts_text import indexed_raw
from tenant_events.values.events import EventFilter
from tenant_events.values.retention import Retention

DAY = 86400.0
NOW = time.time()


def _named(row: EventRow, k: int) -> EventRow:
    """Users' nicknames "Qzwa Qzwb" (the rows confirm those), every third one's "Qzwc" (a word of the values)."""
    data = orjson.loads(row.raw)
    obj = data["event"]["data"].get("object")
    if row.type != "user.updated" or not isinstance(obj, dict):
        return row
    obj["nickname"] = "Qzwa Qzwb" if k % 3 else "Qzwc"
    return row._replace(raw=orjson.dumps(data).decode())


def _compare(tmp: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[EventRow, int], EventRow]) -> None:
    rows = history(600, NOW - 60 * DAY, 55 * DAY / 600, seed=5)
    rows = [change(_named(r, k), k) for k, r in enumerate(rows)]
    one, two = tmp / "one.sqlite3", tmp / "two.sqlite3"
    store_rows(one, rows, None, NOW)
    store_rows(two, rows, 3, NOW)
    monkeypatch.setattr(candidates, "FEW_CANDIDATES", 2)
    with EventReader(one) as single, EventReader(two) as cold:
        for text in ('"qzwa qzwb"', '"qzwb qzwc"', '"qzwa qzwb" type:user.*', "qzwa-qzwb"):
            f = EventFilter(query=text) if '"' in text else EventFilter(text=text)
            assert cold.count(f) == single.count(f), text
            assert cold.histogram(f, 86400) == single.histogram(f, 86400), text
            assert cold.counts_by_type(f) == single.counts_by_type(f), text


def test_a_control_character_between_words_of_a_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored summary holding a control character between words: FTS5 splits there, and the writer's tokens
    must too (they keep that character as their own marker of two tokens kept apart)."""

    def change(row: EventRow, k: int) -> EventRow:
        return row._replace(summary="Qzwa\x01Qzwb \x01qzwb\x01qzwc") if k % 7 == 1 else row

    _compare(tmp_path, monkeypatch, change)


def test_a_control_character_between_words_of_an_event_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An envelope's id spelled with `\\u0001` is decoded: the event id holds the control character itself."""

    def change(row: EventRow, k: int) -> EventRow:
        return row._replace(event_id=f"{row.event_id}-qzwa\x01qzwb\x01qzwc") if k % 7 == 1 else row

    _compare(tmp_path, monkeypatch, change)


def test_a_control_character_as_received_in_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON as received with a control character unescaped (no JSON reader takes it; the index still does)."""

    def change(row: EventRow, k: int) -> EventRow:
        return (
            row._replace(raw=row.raw.replace('"data":', '"note":"qzwa\x01qzwb\x01qzwc","data":', 1))
            if k % 7 == 1
            else row
        )

    _compare(tmp_path, monkeypatch, change)


def _cleaned(path: Path) -> Callable[[sqlite3.Connection], None]:
    """The moved rows out of the live full-text index, a chunk at a time: a month's files merge only then."""

    def cleanup(conn: sqlite3.Connection) -> None:
        while archive_move.fts_cleanup_chunk(conn, path):
            pass

    return cleanup


def test_words_first_seen_late_in_files_moved_in_runs_and_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The phrase in given names (no field's) from the first events on, its words a field's value only from the
    middle of the months on: the early events' pairs are not listed, and a merge of files moved in runs keeps each
    word from the latest file's seq."""
    LATE = 12
    rows = history(700, NOW - 60 * DAY, 55 * DAY / 700, seed=7)
    out = []
    users = 0
    for k, row in enumerate(rows):
        data = orjson.loads(row.raw)
        obj = data["event"]["data"].get("object")
        if isinstance(obj, dict) and row.type.startswith("user."):
            users += 1
            obj["given_name"] = "Qzwa Qzwb qzwc" if k % 2 else "qzwb (qzwa)"
            if users % LATE == 0:
                obj["nickname"] = "qzwc Qzwa Qzwb"
            row = row._replace(raw=orjson.dumps(data).decode())
        out.append(row)
    one, two = tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"
    store_rows(one, out, None, NOW)
    writer = StoreWriter(two)
    try:
        writer.commit_sync(Batch(events=out))
        writer.index_all_sync()
        keep(writer, Retention(keep_live_days=3, settle_seconds=0), NOW, move_rows=90)
        writer.index_all_sync()
        writer.run_archive_job(_cleaned(two)).result()  # as the writer's idle time does
        keep(writer, Retention(keep_live_days=3, settle_seconds=0), NOW)  # a month's files merged into one
    finally:
        writer.close()
    monkeypatch.setattr(candidates, "FEW_CANDIDATES", 2)
    with EventReader(one) as single, EventReader(two) as cold, statements(monkeypatch) as seen:
        for text in ('"qzwa qzwb"', '"qzwb qzwa"', '"qzwa qzwb qzwc"', '"qzwc qzwa"', "qzwa-qzw"):
            f = EventFilter(query=text) if '"' in text else EventFilter(text=text)
            assert cold.count(f) == single.count(f) > 0, text
            assert cold.counts_by_type(f) == single.counts_by_type(f), text
    assert any("pair_held" in s for s in seen)
    spans = [p.name.split(".")[1].split("-") for p in (tmp_path / "two.archive").glob("*.tokens.parquet")]
    assert max(int(b) - int(a) for a, b in spans) > 200  # a month's runs merged into one file


# What random strings are made of: the words, their cases, separators, what JSON escapes, escapes as text, a
# control character that is the writer's own marker, a NUL, past ASCII, words of true/null and numbers.
_PIECES = (
    *("qzwa", "qzwb", "Qzwa", "QZWB", "qzwa5", "qzwb qzwa", " ", " ", "-", "_", "/", ":", ",", "{", "'", "x"),
    *("\x01", "\x00", "\x7f", "\n", "\\", '"', "\u00e9", "5", "1e5", "e", "true", "null", "u0041"),
    *("\\u0071zwa", "\\u0026", "\\u00e9"),
)
_SPLIT = "[^A-Za-z0-9\x80-\U0010ffff]+"  # between a row's words (archive_terms.py)
_SEEN = ("qzwa qzwb", "qzwb qzwa")  # an earlier event's values: the phrases' tokens are words from seq 1 on


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 6)))


def _random_event(rng: random.Random) -> tuple[str, str, str, list[str]]:
    """An event id, summary and raw JSON of random strings (in keys, values, arrays; escapes made and broken),
    and the values (some of its strings, lower-cased as SQLite does) a field holds."""
    strings = [_random_text(rng) for _ in range(rng.randint(1, 4))]
    obj: dict[str, object] = {}
    for s in strings:
        obj[rng.choice(["a", "b", s])] = rng.choice([s, [s, _random_text(rng)], 5, True, None])
    raw = orjson.dumps(obj).decode()
    if rng.random() < 0.3:
        raw = raw.replace("\\u0001", rng.choice(["\x01", "\\u0001"]))
    if rng.random() < 0.2:
        raw = raw.replace(" ", "\\u0020", 1).replace("/", "\\/")
    if rng.random() < 0.2:
        raw = raw.replace("\\\\u", "\\u")  # a string's own backslash-u made an escape (the JSON may break)
    values = ["".join(c.lower() if c.isascii() else c for c in s) for s in strings if rng.random() < 0.6]
    return rng.choice(["e1", "e-" + _random_text(rng)]), rng.choice(["s", _random_text(rng)]), raw, values


def _written(pairs: PairRows) -> tuple[dict[str, list[int]], dict[str, int]]:
    """The rows `pairs` writes: those listing events (the pairs and UNSURE), and the counts (COVER, the words)."""
    listed: dict[str, list[int]] = {}
    counted: dict[str, int] = {}
    for line in b"".join(pairs.lines()).splitlines():
        row = orjson.loads(line)
        if row["term"] == COVER or row["term"].startswith(WORD):
            counted[row["term"]] = row["n"]
        else:
            listed[row["term"]] = row["seqs"]
    return listed, counted


def _filed(rows: FieldRows) -> list[str]:
    """The values from where a row starts in them of the event's field rows filed `#` (not `#!`)."""
    out = io.BytesIO()
    rows.write(out)
    terms = [orjson.loads(line)["term"] for line in out.getvalue().splitlines()]
    return [t.split(":", 1)[1] for t in terms if not t.startswith("#!") and t != "#:"]


def test_a_phrase_fts5_finds_is_listed_or_confirmed_in_hostile_text() -> None:
    """Every event FTS5 finds a phrase in (two or three tokens, the last a prefix or not) that its field rows do
    not confirm lists one of the phrase's pairs or is under `#|!`, with its words seen: else a count ruled it
    out. Random strings of the hostile pieces above; checked against FTS5 itself."""
    phrases = (
        ("qzwa", "qzwb"),
        ("qzwb", "qzwa"),
        ("qzwa", "qzwa"),
        ("qzwa", "qzw*"),
        ("qzwb", "qzwa", "qzwb"),
    )
    mem = sqlite3.connect(":memory:")
    mem.execute(f"CREATE VIRTUAL TABLE t USING fts5(event_id, summary, raw, tokenize='{FTS_TOKENIZER}')")
    mem.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    rng = random.Random(17)
    missed = []
    for _ in range(4000):
        event_id, summary, raw, values = _random_event(rng)
        rows = FieldRows()
        spelled = rows.add(1, raw, [values, *([] for _ in FIELD_COLUMNS[1:])])
        filed = _filed(rows)
        pairs = PairRows()
        pairs.add(0, "e0", "s", "{}", [_SEEN], [])
        text = indexed_raw(raw)
        pairs.add(1, event_id, summary, text, [values], spelled)
        listed, words = _written(pairs)
        mem.execute("DELETE FROM t")
        mem.execute(
            "INSERT INTO t (rowid, event_id, summary, raw) VALUES (1, ?, ?, ?)", (event_id, summary, text)
        )
        vocabulary = [str(r[0]) for r in mem.execute("SELECT term FROM v")]
        for phrase in phrases:
            prefix = phrase[-1].endswith("*")
            tokens = [t.rstrip("*") for t in phrase]
            query = '"' + " ".join(tokens) + '"' + ("*" if prefix else "")
            if not mem.execute("SELECT count(*) FROM t WHERE t MATCH ?", (query,)).fetchone()[0]:
                continue
            if prefix and any(w.startswith(tokens[-1]) and f"{WORD}{w}" not in words for w in vocabulary):
                continue  # a completion that is no word: the file is read as before
            rx = re.compile(_SPLIT.join(tokens) + ("" if prefix else f"(?:$|{_SPLIT})"))
            if any(rx.match(rest) for rest in filed):  # the field rows confirm it
                continue
            wanted = [f"{MARK}{a} {b}" for a, b in itertools.pairwise(tokens)]
            held = 1 in listed[UNSURE] or any(
                1 in seqs
                for term, seqs in listed.items()
                if term in wanted[:-1] or (term.startswith(wanted[-1]) if prefix else term == wanted[-1])
            )
            if not held:
                missed.append((phrase, event_id, summary, raw, values))
    assert not missed, missed[:3]
