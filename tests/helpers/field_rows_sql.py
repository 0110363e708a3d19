"""The field rows (docs/archive.md "Field words") as the archive's writer once made them in DuckDB's SQL, from
an events file's values: the reference archive_fields.FieldRows, which makes them (in C) where the values are
made, is held to, row for row."""

from __future__ import annotations

from pathlib import Path

from tenant_events.store import duck
from tenant_events.store.archive_fields import _EVERY_WORD, _PIECE, _SHARED, _SHARED_KEY, COVER, MARK, SPELLED
from tenant_events.store.archive_layout import FIELD_COLUMNS

_WORD = r"a-z0-9\x{80}-\x{10ffff}"  # a word's characters (query_sql._NOT_WORD's complement)
_RUN = f"[{_WORD}]+[^{_WORD}]*"  # a word and what follows it up to the next
_PIECE_RX = f"^.{{0,{_PIECE - 1}}}[0-9]"


def _values(name: str, column: str, events: str) -> str:
    """The query of (seq, f, v) of one field's values, each up to a NUL: one both _SHARED fields hold under
    their joint name, once."""
    f, other, keep = f"'{name}'", "", "true"
    if name in _SHARED:
        other = f"f_{_SHARED[1 - _SHARED.index(name)]}"
        shared = f"coalesce(list_contains({other}, v), false)"
        if name == _SHARED[0]:
            f = f"CASE WHEN {shared} THEN '{_SHARED_KEY}' ELSE {f} END"
        else:
            keep = f"NOT {shared}"
        other = f"{other}, "
    return (
        f"SELECT seq, {f} AS f, split_part(v, chr(0), 1) AS v"
        f" FROM (SELECT seq, {other}unnest({column}) AS v FROM read_parquet({events})) WHERE {keep}"
    )


def _suffixes(values: str, spelled: str | None) -> str:
    """The query of (term, seq) of the values (seq, f, v) from each place a word starts in them that is filed."""
    if spelled is None:
        per_value = f"SELECT seq, f, v, true AS plain FROM ({values})"
    else:
        per_value = (
            f"SELECT e.seq AS seq, e.f AS f, e.v AS v, o.seq IS NULL AS plain FROM ({values}) AS e"
            f" LEFT JOIN (SELECT DISTINCT seq, v FROM read_json({spelled}, columns = {{'seq': 'BIGINT', 'v': 'VARCHAR'}}))"
            " AS o ON o.seq = e.seq AND o.v = e.v"
        )
    every = ", ".join(f"'{name}'" for name in sorted(_EVERY_WORD))
    filed = f"k = 1 OR f IN ({every}) OR NOT regexp_matches(runs[k], '{_PIECE_RX}')"
    return (
        f"SELECT '{MARK}' || CASE WHEN plain THEN '' ELSE '{SPELLED}' END || f || ':' || rest AS term, seq FROM"
        " (SELECT seq, f, plain, unnest(list_transform(list_filter(generate_series(1, len(runs)),"
        f" k -> {filed}), k -> array_to_string(runs[k:], ''))) AS rest"
        f" FROM (SELECT seq, f, plain, regexp_extract_all(v, '{_RUN}') AS runs FROM ({per_value})))"
    )


def words_select(events: str, spelled: str | None = None) -> str:
    """The query of the field rows (term, n, seqs) of the events file at `events` (an SQL literal), the `#:` row
    among them (unordered): each value from every place a word starts in it but a piece of an identifier
    (_PIECE) inside it (its runs of a word and the characters after it, joined from each run on), under `#!`
    when the event's JSON may spell it otherwise (`spelled`: a JSON file of the seq and value of each such, as
    FieldRows.add finds them; None when there are none). Each field is read by a scan of its own, as the version
    before did: one scan of every field's column left the engine's threads one row group of the events each."""
    suffixes = " UNION ALL ".join(
        _suffixes(_values(name, column, events), spelled) for name, column in FIELD_COLUMNS
    )
    return (
        f"SELECT '{COVER}' AS term, count(*) AS n, list(seq ORDER BY seq) AS seqs FROM read_parquet({events})"
        " UNION ALL SELECT term, len(seqs) AS n, seqs FROM (SELECT term, list(seq ORDER BY seq) AS seqs"
        f" FROM (SELECT DISTINCT term, seq FROM ({suffixes})) GROUP BY term)"
    )


def sql_rows(events: Path, spelled: Path | None = None) -> list[tuple[str, int, list[int]]]:
    """words_select's rows of the events file at `events`, in term order."""
    odd = duck.literal(str(spelled)) if spelled is not None else None
    cur = duck.cursor()
    try:
        found = cur.execute(
            f"SELECT * FROM ({words_select(duck.literal(str(events)), odd)}) ORDER BY term"
        ).fetchall()
    finally:
        cur.close()
    return [(str(t), int(n), list(s)) for t, n, s in found]
