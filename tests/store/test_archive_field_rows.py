"""Which field rows the archive's writer files (docs/archive.md "Field words"): a value both user and email hold
once, under `#user&email:`; no rows from inside a value at a piece of an identifier (a word whose first three
characters hold a digit), whose terms are checked on their values instead; the values the JSON may spell
otherwise found where the values are made; and files written by an earlier version read from their columns."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from helpers.archive_pairs import answers, statements, tiered_pair
from helpers.history import history
from tenant_events.store import EventReader, EventRow, duck
from tenant_events.store.archive_fields import spelled_values, words_select
from tenant_events.store.archive_layout import FIELD_COLUMNS, folder_of, tokens_name
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()


def _terms(tmp: Path, events: dict[str, list[list[str]]]) -> set[str]:
    """The terms words_select files for events given as {column: values of each event}."""
    path = tmp / "events.parquet"
    n = len(next(iter(events.values())))
    names = [column for _name, column in FIELD_COLUMNS]
    cur = duck.cursor()
    try:
        cur.execute(f"CREATE TEMP TABLE e (seq BIGINT, {', '.join(f'{c} VARCHAR[]' for c in names)})")
        for k in range(n):
            values = [events.get(c, [[]] * n)[k] for c in names]
            cur.execute(f"INSERT INTO e VALUES ({', '.join('?' * (1 + len(names)))})", [k + 1, *values])
        cur.execute(f"COPY e TO {duck.literal(str(path))} (FORMAT parquet)")
        return {str(r[0]) for r in cur.execute(words_select(duck.literal(str(path)))).fetchall()}
    finally:
        cur.close()


def test_a_value_both_user_and_email_hold_is_filed_once_and_no_row_starts_at_an_identifiers_piece(tmp_path):
    terms = _terms(
        tmp_path,
        {
            "f_user": [["ada lovelace", "ada@example.com"], ["bob"], ["auth0|54fbc1"], None],  # type: ignore[list-item]
            "f_email": [["ada@example.com"], ["bob@example.com"], [], ["cy@example.org"]],
            "f_org": [[], [], ["acme-75tz", "ab-c9", "ab-cde9"], []],
            "f_ip": [[], [], ["203.0.113.7"], []],
        },
    )
    assert {"#user&email:ada@example.com", "#user&email:example.com", "#user&email:com"} <= terms
    assert {"#user:ada lovelace", "#user:lovelace", "#user:bob", "#email:bob@example.com"} <= terms
    assert {"#email:cy@example.org", "#email:example.org"} <= terms  # no user values at all (NULL)
    assert not {"#user:ada@example.com", "#email:ada@example.com", "#user:example.com"} & terms
    assert {"#user:auth0|54fbc1", "#org:acme-75tz", "#org:ab-c9", "#org:cde9"} <= terms  # cde9: digit fourth
    assert not {"#user:54fbc1", "#org:75tz", "#org:c9"} & terms
    assert {"#ip:203.0.113.7", "#ip:0.113.7", "#ip:113.7", "#ip:7"} <= terms  # every word of an address


def test_values_the_json_may_spell_otherwise_are_found_where_the_values_are_made():
    raw = r'{"a": "Ada", "b": "x\ny", "c": "\u0051zvx", "d": "ab\u0000 cd", "e": "say \"hi\"", "f": 5}'
    fields = [["ada", "x\ny"], ["qzvx"], ["ab\x00 cd", 'say "hi"'], ["5"]]
    assert spelled_values(raw, fields) == ["x\ny", "qzvx", "ab", 'say "hi"', "5"]
    assert spelled_values('{"a": "ADA LOVELACE"}', [["ada lovelace"]]) == []


# names as the JSON spells them; (query, answered by the user rows: False when its values are checked)
NAMES = ("qzvd 5x1y", "lin-9qzv", "ab1 cd", "Qzve ZZZ7", "qzvf\u00e97x")
QUERIES = (
    ("user:qzvd", True),
    ("user:qzvd 5x1y", True),  # from where the value starts: filed
    ('user:"qzvd 5x1y"', True),
    ("user:5x1y", False),  # an identifier's piece inside a value: not filed
    ("user:5x", False),
    ("user:lin", True),
    ("user:lin-9qzv", True),
    ("user:9qzv", False),
    ("user:ab1", False),  # it starts a value, yet may be a piece inside another
    ("user:cd", False),  # two letters, which a piece may start with (cd9…)
    ("user:ab1 cd", False),
    ("user:zzz7", True),  # its digit after its first three characters: no piece, filed
    ("user:qzvfé7x", True),
    ("-user:9qzv", False),
    ("user:9qzv OR user:qzvd", False),
)


def _named(row: EventRow, name: str) -> EventRow:
    data = orjson.loads(row.raw)
    data["event"]["data"]["object"]["name"] = name
    return row._replace(raw=orjson.dumps(data).decode())


def test_terms_at_an_identifiers_piece_are_checked_on_their_values_and_answer_as_one_store(
    tmp_path, monkeypatch
):
    rows = history(600, NOW - 60 * DAY, 60 * DAY / 600, seed=23)
    users = [k for k, r in enumerate(rows) if r.type in ("user.updated", "user.created") and k < 450]
    for k, name in zip(users[::3], NAMES * 3, strict=False):
        rows[k] = _named(rows[k], name)
    one, two = tiered_pair(tmp_path, rows, NOW)
    with EventReader(one) as single, EventReader(two) as reader:
        assert reader.archived_upto() > 450
        for query, worded in QUERIES:
            f = EventFilter(query=query)
            expected = answers(single, f)
            assert expected[1], query  # type: ignore[index]
            with statements(monkeypatch) as seen:
                assert answers(reader, f) == expected, query
            assert any("f_user" in s for s in seen) is not worded, (query, seen)


def test_a_file_of_an_earlier_version_with_its_single_word_rows_is_read_from_its_columns(
    tmp_path, monkeypatch
):
    """A token file as the version before wrote it: a `#` row covering its events and rows of single words
    (`#user=qzvd`), here listing no event; none is read, the values are checked."""
    rows = history(400, NOW - 60 * DAY, 60 * DAY / 400, seed=24)
    users = [k for k, r in enumerate(rows) if r.type in ("user.updated", "user.created") and k < 300]
    for k in users[::4]:
        rows[k] = _named(rows[k], "qzvd lin")
    one, two = tiered_pair(tmp_path, rows, NOW)
    folder = folder_of(two)
    for events in (p for p in folder.glob("*.parquet") if not p.name.endswith(".tokens.parquet")):
        tokens = folder / tokens_name(events.name)
        cur = duck.cursor()
        try:
            cur.execute(
                f"COPY (SELECT '#' AS term, count(*) AS n, list(seq ORDER BY seq) AS seqs"
                f" FROM read_parquet({duck.literal(str(events))})"
                " UNION ALL SELECT '#user=qzvd', 1, [-1] UNION ALL SELECT '#user=lin', 1, [-1]"
                f" UNION ALL (SELECT * FROM read_parquet({duck.literal(str(tokens))}) WHERE NOT starts_with(term, '#')"
                f" ORDER BY term)) TO {duck.literal(str(tokens) + '.old')} (FORMAT parquet)"
            )
        finally:
            cur.close()
        Path(str(tokens) + ".old").replace(tokens)
    with EventReader(one) as single, EventReader(two) as reader:
        for query in ("user:qzvd", "user:lin", "-user:qzvd", "user:qzvd OR org:acme", 'user:"qzvd lin"'):
            f = EventFilter(query=query)
            expected = answers(single, f)
            with statements(monkeypatch) as seen:
                assert answers(reader, f) == expected, query
            assert expected[1], query  # type: ignore[index]
            assert not any("'#user" in s and "TEMP TABLE sets" in s for s in seen), query
            assert any("f_user" in s for s in seen), query


def test_the_rows_of_one_field_a_filter_names_are_read_together(tmp_path, monkeypatch):
    """`org:acme OR org:globex`: both terms' rows (`#org:acme…`, `#org:globex…`) are looked up in one read of the
    token files, not one each; `user:` terms' rows likewise, the values user and email share (`#user&email:`) in
    a read of their own (their rows lie apart from `#user:`'s: one range over both spans every row between). The
    answers are the single-tier store's."""
    rows = history(600, NOW - 60 * DAY, 60 * DAY / 600, seed=5)
    one, two = tiered_pair(tmp_path, rows, NOW)
    with EventReader(one) as single, EventReader(two) as reader:
        assert reader.archived_upto() > 250
        for query, reads in (("org:acme OR org:globex", 1), ("user:ada OR user:grace", 2)):
            f = EventFilter(query=query)
            expected = answers(single, f)
            assert expected[1], query  # type: ignore[index]
            with statements(monkeypatch) as seen:
                assert answers(reader, f) == expected, query
            lookups = [s for s in seen if "TEMP TABLE sets" in s]
            assert lookups, query
            assert all(s.count("FROM tok") == reads for s in lookups), (query, lookups)
