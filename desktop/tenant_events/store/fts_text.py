"""The text the full-text index is given for an event's raw JSON: the JSON with its `\\u` escapes decoded.

JSON encoders spell printable characters as escapes: Go's writes `&` as `\\u0026`, .NET's default writes `'` and
`+` as `\\u0027` and `\\u002B`, Gson writes `=` as `\\u003d`, many write every character past ASCII that way.
The tokenizer would see `O\\u0027Brien` as the tokens `o` and `u0027brien`, so "o brien" would miss the event
it names. An event whose JSON holds a `\\u` is indexed as orjson writes it again (orjson writes no such escape,
nor `\\/`, and numbers in their shortest form: 1.50 as 1.5); any other event as it is, at the cost of one
substring test. An escaped ASCII letter or digit (`\\u0041`), which no encoder writes, stays as spelled: the
live tier's quick check on the raw JSON (query_sql.py) looks for letters and digits as spelled.

Everything that writes the index, deletes from it (FTS5's external content: a 'delete' must give exactly the
text indexed) or tokenizes for the archive uses `indexed_raw`; the archive's phrase check reads the same text
with `DECODED_RAW_SQL`. FTS5's 'rebuild' and `integrity-check` with rank 1 read the `events` table itself, so
they do not apply to this index: the indexer builds it, and a migration (`reindex_escaped`) re-indexed it.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Final

import orjson

_ESCAPE: Final = "\\u"
# an escaped ASCII letter or digit, kept as spelled: its backslash escaped, so it reads as the text `\\u0041`
_LETTER: Final = r"\\u(00(?:3[0-9]|4[1-9A-Fa-f]|5[0-9Aa]|6[1-9A-Fa-f]|7[0-9Aa]))"
_KEEP: Final = re.compile(_LETTER)
_CHUNK: Final = 1000
# The index's one insert and one delete (external content: a delete gives the text that was indexed)
FTS_INSERT: Final = "INSERT INTO events_fts (rowid, event_id, summary, raw) VALUES (?, ?, ?, ?)"
FTS_DELETE: Final = (
    "INSERT INTO events_fts (events_fts, rowid, event_id, summary, raw) VALUES ('delete', ?, ?, ?, ?)"
)
# Where the index holds an escape as spelled: the tokenizer splits at its backslash, so `\\u0027Brien` made a
# token `u0027brien`; every token starting with `u` and a hex digit (`u0`-`u9`, `ua0`-`uff`: no words but a
# few such as `u2f`) finds those rows without reading every event's JSON (30 days of events at the upgrade).
_SPELLED_ESCAPES: Final = " OR ".join(
    [f"u{d}*" for d in "0123456789"] + [f"u{a}{d}*" for a in "abcdef" for d in "0123456789abcdef"]
)
# The same in DuckDB, whose json() writes JSON again as orjson does (no escapes of printable characters, numbers
# in the same shortest form but for exponents past 16 digits and integers past 64 bits, which orjson makes
# floats or refuses); JSON it cannot read stays as it is, as it does here.
DECODED_RAW_SQL: Final = (
    "(CASE WHEN contains(raw, '\\u') THEN coalesce(json(try_cast(regexp_replace(raw,"
    f" '{_LETTER}', '\\\\\\\\u\\1', 'g') AS JSON))::VARCHAR, raw) ELSE raw END)"
)


def indexed_raw(raw: str) -> str:
    """The text of `raw` the full-text index holds: with its `\\u` escapes decoded, or itself."""
    if "\\" not in raw or _ESCAPE not in raw:  # a backslash first: memchr, 40 times a two-character search
        return raw
    kept = _KEEP.sub(r"\\\\u\1", raw) if _KEEP.search(raw) else raw  # a search costs a third of a sub
    try:
        return orjson.dumps(orjson.loads(kept)).decode()
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return raw  # not JSON orjson reads or writes (nested too deep)


def reindex_escaped(conn: sqlite3.Connection) -> int:
    """Index the live rows whose raw JSON holds an escape again, with the text `indexed_raw` gives (a database
    written before held them as spelled); in the caller's transaction (schema 9). Returns how many it re-indexed.
    The archived rows still in the index are left to the idle-time cleanup (archive_move.py), which deletes
    those up to `fts_spelled_upto` as spelled."""
    upto = int(conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0])
    cur = conn.execute(
        "SELECT seq, event_id, summary, raw FROM events WHERE seq IN (SELECT rowid FROM events_fts WHERE"
        " events_fts MATCH ?) AND seq <= ? AND instr(raw, '\\u') > 0",
        (_SPELLED_ESCAPES, upto),
    )
    done = 0
    while rows := cur.fetchmany(_CHUNK):
        changed = [(s, e, summary, raw, indexed_raw(raw)) for s, e, summary, raw in rows]
        changed = [r for r in changed if r[4] != r[3]]
        conn.executemany(FTS_DELETE, [r[:4] for r in changed])
        conn.executemany(FTS_INSERT, [(*r[:3], r[4]) for r in changed])
        done += len(changed)
    return done
