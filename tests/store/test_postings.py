"""The archive writer's compiled postings (store/_postings.c): each token FTS5's tokenizer makes of an event's
texts, with its events, exactly as an FTS5 index of the same texts lists them; refused input; the window's
thread free to run while a month's texts are tokenized."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import orjson
import pytest

from tenant_events.store._postings import PairLists, Postings
from tenant_events.store.archive_build import FTS_TOKENIZER

# pieces of text FTS5's tokenizer treats each its own way: diacritics it strips or keeps, letters it folds,
# scripts with no case, marks, digits of other scripts, private use, separators, controls, escapes
_PIECES = (
    "ada",
    "Ada",
    "ÅDA",
    "Łódź",
    "straße",
    "STRASSE",
    "ﬁle",
    "ǅemal",
    "İstanbul",
    "ıi",
    "Ωmega",
    "ὈΔΥΣΣΕΎΣ",
    "café",
    "cafe\u0301",
    "naïve",
    "Æsir",
    "øre",
    "東京",
    "日本語テキスト",
    "한국어",
    "١٢٣",
    "٣٤",
    "①②",
    "½",
    "\ue000priv",
    "😀",
    "a\u200bb",
    "x\u00a0y",
    "tab\tcr\r",
    "nul\x00end",
    "\x01",
    "\x1f",
    '"q"',
    "\\u0041",
    "auth0|5f3a",
    "203.0.113.7",
    "a-b_c",
    "e2e",
    "10e3",
    "0x1F",
    "ǈ",
    "ẞ",
    "Ǆ",
    "ﬀ",
    "Ⅻ",
    "ⓐ",
    "ǰ",
    "ŉ",
)


def _text(rng: random.Random) -> str:
    return rng.choice(["", " ", ", ", "\n"]).join(rng.choice(_PIECES) for _ in range(rng.randint(0, 12)))


def _fts5_lines(events: list[tuple[int, str, str, str]]) -> list[dict[str, object]]:
    """What an FTS5 index of the texts lists: each term with its events, in term order."""
    mem = sqlite3.connect(":memory:")
    mem.execute(
        "CREATE VIRTUAL TABLE t USING fts5(event_id, summary, raw, content='',"
        f" tokenize='{FTS_TOKENIZER}', detail=none, columnsize=0)"
    )
    mem.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    mem.executemany("INSERT INTO t (rowid, event_id, summary, raw) VALUES (?, ?, ?, ?)", events)
    rows = mem.execute("SELECT term, group_concat(doc, ',') FROM v GROUP BY term ORDER BY term").fetchall()
    mem.close()
    return [
        {"term": term, "n": len(docs.split(",")), "seqs": [int(d) for d in docs.split(",")]}
        for term, docs in rows
    ]


def _postings_of(events: list[tuple[int, str, str, str]], slice_size: int) -> Postings:
    """The events' postings, given `slice_size` events a call."""
    postings = Postings()
    for at in range(0, len(events), slice_size):
        part = events[at : at + slice_size]
        postings.add([e[0] for e in part], *([e[k] for e in part] for k in (1, 2, 3)))
    return postings


def _lines(postings: Postings) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in b"".join(iter(postings.block, b"")).splitlines()]


@pytest.mark.parametrize("seed", range(4))
def test_the_postings_of_hostile_text_are_fts5_s_own(seed: int) -> None:
    """Random texts of the pieces above, in three columns, given a slice at a time: every term and its events are
    an FTS5 index's, in its order (bytewise), and each line is one the writer's reader takes."""
    rng = random.Random(seed)
    seq = rng.randint(-5, 5)
    events = []
    for _ in range(1500):
        seq += rng.choice([1, 1, 2, 1000, 2**40])
        events.append((seq, _text(rng), _text(rng), _text(rng)))
    postings = _postings_of(events, 97)
    got = _lines(postings)
    assert got == _fts5_lines(events)
    assert postings.terms == len(got) and len(got) > 100
    assert postings.longest == max(len(orjson.dumps(line)) + 1 for line in got)


@pytest.mark.parametrize("seed", range(3))
def test_the_postings_of_ascii_text_split_without_the_tokenizer_are_fts5_s_own(seed: int) -> None:
    """All-ASCII texts (split in C, not by the tokenizer's calls): every one of the 128 characters, words of mixed
    case and digits, runs of separators; beside texts past ASCII in the same events."""
    rng = random.Random(seed)
    chars = [chr(c) for c in range(128)]
    words = ["Ada", "LOVELACE", "e2e", "0x1F", "auth0|5f3a", "203.0.113.7", "a-b_c", "Z9", "zz", "\\u0041"]

    def ascii_text() -> str:
        return "".join(
            rng.choice(chars) if rng.random() < 0.5 else rng.choice(words) for _ in range(rng.randint(0, 20))
        )

    events = []
    for seq in range(1, 1201):
        texts = [ascii_text() for _ in range(3)]
        if seq % 7 == 0:
            texts[seq % 3] = _text(rng)
        events.append((seq, *texts))
    got = _lines(_postings_of(events, 101))
    assert got == _fts5_lines(events)
    assert len(got) > 500


def test_a_token_longer_than_fts5_keeps_is_cut_where_fts5_cuts_it() -> None:
    events = [(1, "x", "", "a" * 40_000), (2, "", "a" * 32_768 + "b", "y"), (3, "a" * 32_767, "", "")]
    postings = Postings()
    postings.add([e[0] for e in events], *([e[k] for e in events] for k in (1, 2, 3)))
    assert _lines(postings) == _fts5_lines(events)


def test_what_the_postings_refuse_is_said_and_changes_nothing() -> None:
    postings = Postings()
    postings.add([5], ["ada"])
    with pytest.raises(ValueError, match="above every seq"):
        postings.add([6, 6], ["grace", "hopper"])
    with pytest.raises(ValueError, match="a text for every seq"):
        postings.add([7, 8], ["grace"])
    with pytest.raises(TypeError):
        postings.add([9], [b"bytes"])
    postings.add([10], ["ada lovelace"])
    assert _lines(postings) == [
        {"term": "ada", "n": 2, "seqs": [5, 10]},
        {"term": "lovelace", "n": 1, "seqs": [10]},
    ]
    with pytest.raises(RuntimeError, match="being written"):
        postings.add([11], ["late"])
    pairs = PairLists(lambda _lists, _seq, _value: ("x", "y"))  # a mark of str, not bytes
    pairs.add(3, "e", "s", "{}", [], [])
    with pytest.raises(ValueError, match="above every seq"):
        pairs.add(3, "é", "s", "{}", [], [])  # an event listed as one whose pairs are not, as any
    with pytest.raises(TypeError, match="bytes"):
        pairs.add(4, "e", "s", '{"a":"b c"}', [["b c"]], [])
    with pytest.raises(TypeError, match="callable"):
        PairLists(None)  # type: ignore[arg-type]

    def refused(_lists: PairLists, _seq: int, value: str) -> tuple[bytes, bytes] | None:
        if value == "boom":
            raise ValueError("a value first_seen refuses")
        return None

    pairs = PairLists(refused)
    for _ in range(2):  # what first_seen raises is raised, and the event is not listed: it may come again
        with pytest.raises(ValueError, match="refuses"):
            pairs.add(7, "e", "s", "{}", [["fine"], None, ["boom"]], [])
    pairs.add(7, "e", "s", "{}", [["fine"]], [])
    assert b'{"term":"#|#","n":1,"seqs":[]}' in b"".join(iter(pairs.block, b""))


def test_another_thread_runs_while_a_month_s_texts_are_tokenized() -> None:
    """The window's thread keeps running while the mover tokenizes (the lock is let go meanwhile): the longest
    stretch a ticking thread waited is a small part of the time the tokenizing took."""
    rng = random.Random(3)
    texts = [" ".join(rng.choice(_PIECES) for _ in range(60)) for _ in range(2000)] * 40
    ticks: list[float] = []
    done = threading.Event()

    def tick() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    while not ticks:
        time.sleep(0.001)
    postings = Postings()
    start = time.perf_counter()
    postings.add(list(range(1, len(texts) + 1)), texts)
    took = time.perf_counter() - start
    done.set()
    ticker.join()
    during = [t for t in ticks if start <= t <= start + took]
    gaps = [b - a for a, b in zip([start, *during], [*during, start + took], strict=True)]
    assert took > 0.2, f"too little work to tell ({took:.3f} s)"
    assert max(gaps) < took / 2, (max(gaps), took)
