"""Which field rows the archive's writer files (docs/archive.md "Field words"): a value both user and email hold
once, under `#user&email:`; no rows from inside a value at a piece of an identifier (a word whose first three
characters hold a digit), whose terms are checked on their values instead; the values the JSON may spell
otherwise found where the values are made; and files written by an earlier version read from their columns."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from pathlib import Path

import orjson

from helpers.archive_pairs import answers, statements, tiered_pair
from helpers.field_rows_sql import sql_rows
from helpers.history import history, live_rows
from tenant_events.store import EventReader, EventRow, duck
from tenant_events.store.archive_build import TOKENS_FILE, ordered_cursor, tokens_select, write_month
from tenant_events.store.archive_fields import FieldRows
from tenant_events.store.archive_layout import FIELD_COLUMNS, folder_of, tokens_name
from tenant_events.store.archive_pairs import MARK as PAIRS
from tenant_events.store.archive_tally import MARK as TALLY
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()


def _terms(tmp: Path, events: dict[str, list[list[str]]]) -> set[str]:
    """The terms the writer's field rows (FieldRows) file for events given as {column: values of each event},
    held to the rows its earlier SQL made of the same values."""
    names = [column for _name, column in FIELD_COLUMNS]
    n = len(next(iter(events.values())))
    each = [[events.get(c, [[]] * n)[k] for c in names] for k in range(n)]
    rows, spelled = _made_rows(tmp, each, [_json(v for vs in values if vs for v in vs) for values in each])
    assert rows == sql_rows(_events_file(tmp, each)) and not any(spelled)
    return {term for term, _n, _s in rows}


def _events_file(tmp: Path, each: list[list[list[str] | None]]) -> Path:
    """An events file of seqs 1… holding each event's field values (FIELD_COLUMNS)."""
    path = tmp / "events.parquet"
    names = [column for _name, column in FIELD_COLUMNS]
    cur = duck.cursor()
    try:
        cur.execute(
            f"CREATE OR REPLACE TEMP TABLE e (seq BIGINT, {', '.join(f'{c} VARCHAR[]' for c in names)})"
        )
        cur.executemany(
            f"INSERT INTO e VALUES ({', '.join('?' * (1 + len(names)))})",
            [[k + 1, *values] for k, values in enumerate(each)],
        )
        cur.execute(f"COPY e TO {duck.literal(str(path))} (FORMAT parquet)")
    finally:
        cur.close()
    return path


def _json(values: Iterable[str]) -> str:
    """An event's JSON holding each of `values` as a string as it is (no escape: one holding what JSON escapes
    is spelled otherwise all the same)."""
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def _made_rows(
    tmp: Path, each: list[list[list[str] | None]], raws: list[str]
) -> tuple[list[tuple[str, int, list[int]]], list[list[str]]]:
    """The rows FieldRows writes of events (their values and JSON), as the writer reads them back, and each
    event's values its JSON may spell otherwise."""
    made = FieldRows()
    spelled = [made.add(k + 1, raw, values) for k, (values, raw) in enumerate(zip(each, raws, strict=True))]
    with (tmp / TOKENS_FILE).open("wb") as f:
        longest = made.write(f)
    cur = ordered_cursor()
    try:
        found = cur.execute(tokens_select(tmp, longest)).fetchall()
    finally:
        cur.close()
    return [(str(t), int(n), list(s)) for t, n, s in found], spelled


_PIECES = (
    "a",
    "b",
    "ab",
    "5",
    "57",
    "x9",
    "-",
    ".",
    "@",
    " ",
    "|",
    "_",
    "\x00",
    "\n",
    "é",
    "Ω",
    "É",
    "\u00e97",
    "'",
)


def test_the_field_rows_made_in_c_are_those_the_sql_made_row_for_row(tmp_path):
    """Random values of every field (words, digits at a word's start or after it, punctuation, NULs, line breaks,
    characters past ASCII, values user and email share, some of them not in the event's JSON, spelled
    otherwise): FieldRows gives the rows, their order, counts and seqs, that the writer's earlier SQL gave of
    the same events file."""
    rng = random.Random(4)
    names = [column for _name, column in FIELD_COLUMNS]

    def value() -> str:
        return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 7)))

    each: list[list[list[str] | None]] = []
    raws: list[str] = []
    for _k in range(1500):
        values: list[list[str] | None] = [[value() for _ in range(rng.randint(0, 3))] for _c in names]
        shared = value()
        for column in ("f_user", "f_email"):
            if rng.random() < 0.4:
                values[names.index(column)].append(shared)  # type: ignore[union-attr]
        if rng.random() < 0.1:
            values[names.index("f_email")] = None
        each.append(values)
        raws.append(_json(v.split("\x00", 1)[0] for vs in values if vs for v in vs if rng.random() < 0.9))
    rows, spelled = _made_rows(tmp_path, each, raws)
    odd = tmp_path / "spelled.json"
    odd.write_bytes(
        orjson.dumps([{"seq": k + 1, "v": v} for k, vs in enumerate(spelled) for v in sorted(set(vs))])
    )
    assert rows == sql_rows(_events_file(tmp_path, each), odd)
    assert any(t.startswith("#!") for t, _n, _s in rows) and any(
        t.startswith("#user&email:") for t, _n, _s in rows
    )


def test_a_files_field_rows_are_those_the_sql_makes_of_its_events_file(tmp_path):
    """The token file write_month writes holds, before its tokens, the rows the earlier SQL makes of the events
    file it writes beside it (the simulator's events); its pairs of tokens and counts per hour beside them are
    held to their own rules (test_archive_pairs.py, test_archive_tally.py)."""
    rows = history(2000, NOW - 40 * DAY, 40 * DAY / 2000, seed=12)
    live = live_rows(rows)
    built = write_month(tmp_path, "2026-01", live)
    cur = ordered_cursor()
    try:
        found = cur.execute(
            f"SELECT term, n, seqs FROM read_parquet(?) WHERE starts_with(term, '#') AND NOT starts_with(term, '{TALLY}')"
            f" AND NOT starts_with(term, '{PAIRS}')",
            [str(tmp_path / tokens_name(built.file.name))],
        ).fetchall()
    finally:
        cur.close()
    expected = sql_rows(tmp_path / built.file.name)
    assert [(str(t), int(n), list(s)) for t, n, s in found] == expected and len(expected) > 1000


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
    assert FieldRows().add(1, raw, [*fields, *([] for _ in FIELD_COLUMNS[4:])]) == [
        "x\ny",
        "qzvx",
        "ab",
        'say "hi"',
        "5",
    ]
    assert (
        FieldRows().add(1, '{"a": "ADA LOVELACE"}', [["ada lovelace"], *([] for _ in FIELD_COLUMNS[1:])])
        == []
    )


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
