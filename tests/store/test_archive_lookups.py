"""How the archive looks a filter up in its token files before it reads events (docs/archive.md "Queries"): each
token read by itself (its row groups pruned), the few candidates checked on their own columns before the shown
ones are read, the token counts read once a lookup, and a field value whose tokens most rows hold checked on
every row without a lookup. Every answer stays the single-tier store's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import orjson

from helpers.archive_pairs import answers, statements, tiered_pair
from helpers.history import history
from tenant_events.store import EventReader, EventRow, duck
from tenant_events.values.events import EventFilter

DAY = 86400.0
NOW = time.time()


def _with(
    row: EventRow, *, note: str | None = None, email: str | None = None, ip: str | None = None
) -> EventRow:
    data = orjson.loads(row.raw)
    body = data["event"]["data"]
    if note is not None:
        body.setdefault("context", {})["note"] = note
    if email is not None:
        body["object"]["email"] = email
    if ip is not None:
        body.setdefault("context", {})["request"] = {"ip": ip}
    return row._replace(raw=orjson.dumps(data).decode())


def _pair(tmp: Path, rows: list[EventRow]) -> tuple[Path, Path]:
    return tiered_pair(tmp, rows, NOW)


def _email_rows() -> tuple[list[EventRow], list[int]]:
    """An e-mail whose rarest token five events hold (four in a note only): one match, five candidates."""
    rows = history(900, NOW - 90 * DAY, 90 * DAY / 900, seed=11)
    users = [k for k, r in enumerate(rows) if r.type == "user.updated" and k < 700]
    rows[users[3]] = _with(rows[users[3]], email="qzvkw.lovelace@example.com")
    notes = [k for k in range(50, 700, 150) if k != users[3]][:4]
    for k in notes:
        rows[k] = _with(rows[k], note="qzvkw was here")
    return rows, [users[3], *notes]


def test_each_token_is_looked_up_by_itself_so_the_token_files_row_groups_are_pruned(tmp_path, monkeypatch):
    """A lookup of several tokens reads the token files once per token, filtered by that token alone (Parquet's
    row-group statistics prune it); one read filtered by an OR of them all read every row group."""
    rows, _marked = _email_rows()
    one, two = _pair(tmp_path, rows)
    f = EventFilter(query="email:qzvkw.lovelace@example.com")
    with EventReader(two) as reader, statements(monkeypatch) as seen:
        reader.page_before(f, None, 50)
        reader.count(f)
        with EventReader(one) as single:
            assert [e.seq for e in reader.page_before(f, None, 50)] == [
                e.seq for e in single.page_before(f, None, 50)
            ]
    # the statements that read the token files: a filter of field rows alone reads its rows once (into the table
    # `held`, which its counts and its lookup then read), a page's and a count's each
    files = [s for s in seen if "FROM tok" in s and "FROM held" not in s]
    reads = [re.sub(r"^CREATE OR REPLACE TEMP TABLE \w+ AS ", "", s) for s in files]
    assert len(reads) >= 2, seen
    cursor = duck.cursor()
    for sql in reads:
        plan = "\n".join(str(r[1]) for r in cursor.execute(f"EXPLAIN {sql}").fetchall())
        tokens = set(re.findall(r"term = '[^']*'|starts_with\(term, '[^']*'\)", sql))
        assert len(tokens) >= 1, sql
        assert "CTE Name: tok" not in plan, plan  # not gathered once for every token
        assert plan.count("READ_PARQUET") >= len(tokens), plan  # one pruned read a token


def test_few_candidates_are_checked_before_their_shown_columns_are_read(tmp_path, monkeypatch):
    """The e-mail's five candidates (its rarest token's events) are checked on the e-mail's values first: the
    statement reading the shown columns names the one match only; the token counts are read once a lookup."""
    rows, marked = _email_rows()
    one, two = _pair(tmp_path, rows)
    f = EventFilter(query="email:qzvkw.lovelace@example.com")
    with EventReader(one) as single:
        expected = answers(single, f)
    assert expected[1] == 1
    with EventReader(two) as reader:
        assert reader.archived_upto() >= max(marked) + 1  # every candidate archived
        with statements(monkeypatch) as seen:
            page = reader.page_before(f, None, 50)
        assert [e.seq for e in page] == expected[0]
        shown = [s for s in seen if "event_id, stream_offset" in s and "seq IN (" in s]
        assert shown and all(f"seq IN ({page[0].seq})" in s for s in shown), shown
        assert sum("sum(n)" in s for s in seen) == sum("TEMP TABLE sets" in s for s in seen), seen
        assert answers(reader, f) == expected


def test_a_field_value_whose_tokens_most_events_hold_is_checked_on_every_row_without_a_lookup(
    tmp_path, monkeypatch
):
    """Every event holds the address's tokens (203, 0, 113): a value the field rows cannot answer (one starting
    with punctuation, which the live tier matches anywhere in a value) is checked on every row with no lookup,
    alone and ORed with another field's value; one they answer (`ip:203.0.113.7`, which `203.0.113.70` matches
    too, as the live tier's GLOB `203.0.113.7*` says; `ip:203.0.113`, every address) is the range of its rows,
    no value read. The answers are the single-tier store's."""
    rows = history(900, NOW - 90 * DAY, 90 * DAY / 900, seed=12)
    rows = [_with(r, ip=f"203.0.113.{k % 97}") for k, r in enumerate(rows)]
    one, two = _pair(tmp_path, rows)
    with EventReader(one) as single, EventReader(two) as reader:
        for f in (
            EventFilter(query="ip:.0.113"),
            EventFilter(query="ip:.0.113.7 OR org:.acme"),
            EventFilter(query='-"grace"'),  # a token only the NOT looks up: no count to choose by
        ):
            expected = answers(single, f)
            assert expected[1] > 0
            with statements(monkeypatch) as seen:
                assert answers(reader, f) == expected, f
            assert not any("TEMP TABLE sets" in s for s in seen) or "-" in f.query, seen
        for f in (EventFilter(query="ip:203.0.113.7"), EventFilter(query="ip:203.0.113")):
            expected = answers(single, f)
            assert expected[1] > 0
            with statements(monkeypatch) as seen:
                assert answers(reader, f) == expected
            assert any("TEMP TABLE sets" in s and "'#ip:203.0.113" in s for s in seen), seen
            assert not any("f_ip" in s for s in seen), seen
