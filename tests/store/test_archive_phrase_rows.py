"""A free-text phrase confirmed by the archive's field rows (docs/archive.md "Search"): a candidate whose
`#user:qzva qzvb` row (a value from where a word starts) holds the phrase's tokens side by side is a match with
no text of it read; every answer stays the single-tier store's, over values whose rows and FTS5's tokens could
disagree (a word going on past the phrase, a value the JSON spells with an escaped letter, a word not starting
where the phrase does, a combining accent, punctuation between the words, a value user and e-mail share)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import orjson

from helpers.archive_pairs import answers, statements, tiered_pair
from helpers.history import history
from tenant_events.store import EventReader, EventRow
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()
# (nickname as the JSON spells it, name, e-mail): a user's values, the nickname placed in the raw text as written
PEOPLE = (
    ("Qzva Qzvb", None, None),  # the rows confirm "qzva qzvb"
    ("qzva-qzvb", None, None),
    ("QZVA  qzvb", None, None),
    ("qzva_qzvb", None, None),
    ("Qzvc Qzvdx", "Qzvd Zed", None),  # "qzvc qzvd": the word goes on (a match of "qzvc qzvd*" only)
    (r"Qzv\u0065 Qzvf", "Qzvf Qzve", None),  # escaped letter: FTS5 holds u0065, the value is "qzve qzvf" (#!)
    ("xqzvg qzvh", "Qzvg", None),  # "qzvg qzvh": no word starts at qzvg there
    ("qzvk\u0301 qzvl", None, None),  # a combining accent: FTS5's token is qzvk, the row's word is not
    ("qzvm—qzvn", None, None),  # an em dash: FTS5 splits there, the rows do not
    ("Qzvp", None, "qzvp.qzvq@example.com"),  # the e-mail, a user's value too: `#user&email:`
    ("qzvr\u00e8qzvs", "Qzvs Qzvr", None),  # one word to both: \u00e8 is a letter, not punctuation
)
PHRASES = (
    '"qzva qzvb"',
    "qzva-qzvb",  # free text of two tokens, the last a prefix
    '"qzvc qzvd"',
    "qzvc-qzvd",
    '"qzve qzvf"',
    '"qzvf qzve"',
    '"qzvg qzvh"',
    '"qzvk qzvl"',
    '"qzvm qzvn"',
    '"qzvp qzvq"',
    '"qzvq qzvp"',
    '"qzvr qzvs"',
    '"qzva qzvb" type:user.updated',
    '"qzva qzvb" "qzvp qzvq"',
    '"qzva qzvb" OR "qzvc qzvd"',
    '-"qzva qzvb"',
)


def _person(row: EventRow, nickname: str, name: str | None, email: str | None) -> EventRow:
    data = orjson.loads(row.raw)
    obj = data["event"]["data"]["object"]
    obj["nickname"] = "@NICK@"
    if name is not None:
        obj["name"] = name
    if email is not None:
        obj["email"] = email
    return row._replace(raw=orjson.dumps(data).decode().replace("@NICK@", nickname))


def _rows() -> list[EventRow]:
    rows = history(900, NOW - 90 * DAY, 90 * DAY / 900, seed=33)
    users = [k for k, r in enumerate(rows) if r.type in ("user.updated", "user.created") and k < 700]
    for k, person in zip(users[::2], PEOPLE * 3, strict=False):
        rows[k] = _person(rows[k], *person)
    return rows


def _query(text: str) -> EventFilter:
    return EventFilter(query=text) if '"' in text else EventFilter(text=text)


def test_phrases_the_field_rows_confirm_answer_as_one_store(tmp_path: Path, monkeypatch: object) -> None:
    one, two = tiered_pair(tmp_path, _rows(), NOW)
    with EventReader(one) as single, EventReader(two) as reader:
        assert reader.archived_upto() > 700
        counts = {}
        confirmed = set()
        for text in PHRASES:
            f = _query(text)
            expected = answers(single, f)
            counts[text] = expected[1]
            assert answers(reader, f) == expected, text
            with EventReader(two) as cold, statements(monkeypatch) as seen:  # type: ignore[arg-type]
                assert cold.count(f) == expected[1], text
            if any("regexp_matches(term," in s for s in seen):  # the phrase's field rows read
                confirmed.add(text)
    # the rows' own cases, each checked above against the single store
    assert counts['"qzva qzvb"'] == 12 and counts['"qzvp qzvq"'] == 3 and counts['"qzvq qzvp"'] == 0
    assert counts['"qzvc qzvd"'] == 0 < counts["qzvc-qzvd"]
    assert counts['"qzve qzvf"'] == 0 < counts['"qzvf qzve"']
    assert (
        counts['"qzvg qzvh"'] == 0 == counts['"qzvr qzvs"']
        and counts['"qzvk qzvl"'] == 3 == counts['"qzvm qzvn"']
    )
    # read for the candidates their summaries did not settle (a summary names a user's e-mail, not a nickname)
    assert {'"qzva qzvb"', "qzva-qzvb", "qzvc-qzvd", '"qzva qzvb" type:user.updated'} <= confirmed


def test_a_phrase_the_field_rows_confirm_reads_no_json(tmp_path: Path, monkeypatch: object) -> None:
    """A count and histogram of "qzva qzvb", which stands only in users' nicknames (no summary says them):
    before, each candidate's JSON was read (a row group's worth of the largest column) to find its tokens'
    order. A page reads the JSON of its month's candidates the rows leave, so it does not read the rows."""
    one, two = tiered_pair(tmp_path, _rows(), NOW)
    f = EventFilter(query='"qzva qzvb" type:user.*')
    with EventReader(one) as single, EventReader(two) as reader:
        expected = (single.count(f), single.histogram(f, 86400), single.counts_by_type(f))
        assert expected[0] == 12
        with statements(monkeypatch) as seen:  # type: ignore[arg-type]
            assert (reader.count(f), reader.histogram(f, 86400), reader.counts_by_type(f)) == expected
        assert not any(re.search(r"\braw\b", s) for s in seen), [s for s in seen if "raw" in s]
        assert any("regexp_matches(term," in s and "'#user:qzva'" in s for s in seen)
