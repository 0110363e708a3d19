"""Writes archive files: events as they leave the live table, and merges of a month's files (compaction).

A file is written under a temporary name, flushed to disk (fsync) and only then renamed into the archive folder;
the catalog (archive_catalog.py) lists it after that. A crash at any point leaves either nothing or an
unlisted file, which the next mover removes.

Tokens: SQLite's own FTS5 tokenizer, with the live index's settings, tokenizes the events, and each token's
seqs are listed as it goes (the compiled _postings module: an FTS5 index filled and its vocabulary read back cost
a quarter of the writer's CPU). The archive's search therefore splits text exactly where the live tier's does
(docs/archive.md "Search"), and is given the same text: the raw JSON with its escapes decoded (fts_text.py).
"""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

import orjson

from tenant_events.store import duck
from tenant_events.store._postings import Postings, json_lines
from tenant_events.store.archive_catalog import ArchiveFile
from tenant_events.store.archive_fields import FieldRows
from tenant_events.store.archive_layout import (
    EVENTS_SUFFIX,
    FIELD_COLUMNS,
    PARQUET_OPTIONS,
    ROW_GROUP,
    TOKEN_ROW_GROUP,
    ZSTD_LEVEL,
    canonical_time,
    field_values,
    field_values_of,
    month_of,
    tokens_name,
)
from tenant_events.store.archive_pairs import FIRST as FIRST_PAIR
from tenant_events.store.archive_pairs import PairRows
from tenant_events.store.archive_tally import Tally
from tenant_events.store.fts_text import indexed_raw
from tenant_events.store.records import summary_of

if TYPE_CHECKING:
    import duckdb

FTS_TOKENIZER: Final = "unicode61 remove_diacritics 2"  # as events_fts (schema.py)
_SLICE: Final = 4096  # records encoded per call
_LINE_BREAK: Final = orjson.Fragment(b"\n")
_JSON_LINE: Final = 16_777_216  # DuckDB's longest JSON object by default (maximum_object_size)
TOKENS_FILE: Final = (
    "tokens.jsonl"  # a scratch folder's field rows (archive_fields.FieldRows), then its tokens
)
_COLUMNS: Final = (
    ("seq", "BIGINT"),
    ("time_ms", "BIGINT"),
    ("type", "VARCHAR"),
    ("purpose", "VARCHAR"),
    ("tenant", "VARCHAR"),
    ("source", "VARCHAR"),
    ("event_id", "VARCHAR"),
    ("stream_offset", "VARCHAR"),
    ("received_at", "DOUBLE"),
    ("time", "VARCHAR"),
    ("summary", "VARCHAR"),
    ("raw", "VARCHAR"),
    *((column, "VARCHAR[]") for _f, column in FIELD_COLUMNS),
)
EVENT_COLUMNS: Final = tuple(name for name, _t in _COLUMNS)


def column_types() -> tuple[str, ...]:
    """DuckDB's type of each of EVENT_COLUMNS (a team archive's table has the same columns)."""
    return tuple(t for _n, t in _COLUMNS)


# A live row as the mover reads it: seq, event_id, stream_offset, type, time, time_ms, source, tenant, purpose,
# summary (None before indexing), raw, received_at.
LiveRow = tuple[int, str, str, str, str, int, str, str, str | None, str | None, str, float]


@dataclass(frozen=True)
class Built:
    """A file written into the folder, not yet in the catalog."""

    file: ArchiveFile
    paths: tuple[Path, ...]  # none for a move into the team's lake


def by_month(rows: Iterable[LiveRow]) -> dict[str, list[LiveRow]]:
    out: dict[str, list[LiveRow]] = {}
    for row in rows:
        out.setdefault(month_of(row[5]), []).append(row)
    return out


def _record(row: LiveRow, summary: str) -> tuple[dict[str, object], list[list[str]]]:
    """The row's record (EVENT_COLUMNS) with its `summary`, and its values of FIELD_COLUMNS (the record's last
    columns, given apart for the field and pair rows)."""
    seq, event_id, offset, kind, time_text, time_ms, source, tenant, purpose, _summary, raw, received = row
    values = field_values_of(kind, raw)
    if values is None:
        try:
            message = orjson.loads(raw)
        except orjson.JSONDecodeError:
            message = None
        values = field_values(kind, message)
    record = [
        seq,
        time_ms,
        kind,
        purpose,
        tenant,
        source,
        event_id,
        offset,
        received,
        None if time_text == canonical_time(time_ms) else time_text,
        summary,
        raw,
        *values,
    ]
    return dict(zip(EVENT_COLUMNS, record, strict=True)), values


def _fill(
    postings: Postings, rows: Sequence[LiveRow], summaries: Sequence[str], texts: Sequence[str]
) -> None:
    """The rows' texts as the live index is given them (event id, summary, raw JSON as `texts`, fts_text.
    indexed_raw) into `postings`."""
    postings.add([r[0] for r in rows], [r[1] for r in rows], summaries, texts)


def _vocabulary(postings: Postings, f: BinaryIO) -> int:
    """The tokens into `f` in their order (by token, then seq), a JSON line (term, n, seqs) a token, its seqs in
    one line however many. Returns the longest line's length (tokens_select reads lines of up to that)."""
    while block := postings.block():
        f.write(block)
    return postings.longest


def ordered_cursor() -> duckdb.DuckDBPyConnection:
    """A cursor of the archive writer's engine (duck.writer_cursor: one thread), whose statements keep their rows
    in the order they read them (the shared engine's default lets its threads reorder them, which spares memory
    for readers): a scratch folder's records, already in seq order, reach the file in that order without a
    sort."""
    return duck.writer_cursor()


def synced_rename(tmp: Path, final: Path) -> None:
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)


def sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_rows(
    folder: Path,
    name: str,
    columns: Sequence[tuple[str, str]],
    rows: Iterable[Sequence[object]],
    earlier: Sequence[Path],
    order: str,
) -> tuple[int, int]:
    """A Parquet file of `rows` (`columns`: names and DuckDB types) and the rows of the `earlier` files (the
    same columns), ordered by `order`, without a duplicate row; synced and renamed into `folder` as `name`.
    Returns its rows and bytes. The rows reach DuckDB through a scratch file of JSON lines (a first pass over a
    long history brings millions: row by row inserts would take minutes)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    names = [c for c, _t in columns]
    listed = ", ".join(names)
    types = "{" + ", ".join(f"'{c}': '{t}'" for c, t in columns) + "}"
    with tempfile.TemporaryDirectory(dir=folder, prefix=".settle-") as work_dir:
        scratch, work = Path(work_dir) / "rows.jsonl", Path(work_dir) / "rows.parquet"
        with scratch.open("wb") as f:
            for row in rows:
                f.write(orjson.dumps(dict(zip(names, row, strict=True))))
                f.write(b"\n")
        union = f"SELECT {listed} FROM read_json({duck.literal(str(scratch))}, format = 'newline_delimited', columns = {types})"  # noqa: S608
        if earlier:
            union += f" UNION SELECT {listed} FROM read_parquet(?)"  # noqa: S608
        cur = duck.cursor()
        try:
            cur.execute(
                f"COPY (SELECT DISTINCT * FROM ({union}) ORDER BY {order}) TO {duck.literal(str(work))}"  # noqa: S608
                f" (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL {ZSTD_LEVEL}, ROW_GROUP_SIZE {ROW_GROUP})",
                [[str(p) for p in earlier]] if earlier else [],
            )
            count = int(cur.execute("SELECT count(*) FROM read_parquet(?)", [str(work)]).fetchone()[0])  # type: ignore[index]
        finally:
            cur.close()
        size = work.stat().st_size
        synced_rename(work, folder / name)
    sync_folder(folder)
    return count, size


def new_name(month: str, first_seq: int, last_seq: int) -> str:
    return f"{month}.{first_seq}-{last_seq}.{secrets.token_hex(3)}{EVENTS_SUFFIX}"


def file_of(name: str, month: str, folder: Path, fts_upto: int = 0) -> ArchiveFile:
    events = str(folder / name)
    cur = duck.cursor()
    try:
        first, last, first_ms, last_ms, rows = cur.execute(
            "SELECT min(seq), max(seq), min(time_ms), max(time_ms), count(*) FROM read_parquet(?)", [events]
        ).fetchone()  # type: ignore[misc]
    finally:
        cur.close()
    size = (folder / name).stat().st_size + (folder / tokens_name(name)).stat().st_size
    return ArchiveFile(name, month, first, last, first_ms, last_ms, rows, size, min(fts_upto, last))


@dataclass(frozen=True)
class Scratch:
    """What a scratch folder holds: its events' first and last seq, and its longest line of tokens (for
    tokens_select)."""

    first_seq: int
    last_seq: int
    longest: int


def scratch(chunks: Iterable[Sequence[LiveRow]], work: Path, cues: bool = False) -> Scratch:
    """`rows.json` (the file's records, in seq order) and `tokens.jsonl` (term, n, seqs) of the rows of `chunks` in
    the folder `work`: the rows of a chunk in any order, each chunk's seqs above the one's before it (a month
    given a chunk at a time, each made only when the one before is written, is one file: no merge of files
    re-reads and writes it again). The records go out as JSON lines, a slice of them per call (_records): a call
    and a write per record cost more than the encoding itself, and a slice's records are gone before the next is
    made. One FTS5 index takes every chunk, its vocabulary read once at the end. `cues`: the field rows
    (archive_fields.FieldRows) and the counts per hour and type (archive_tally.Tally) too, before the tokens."""
    with collector_paused():
        return _scratch(chunks, work, cues)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile: records and parsed JSON hold no cycles (reference
    counts free them), yet the collector walked every live row again and again while they were made, a fifth
    of the records' cost (docs/archive.md "What a file holds"). Whoever paused it first turns it on again."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _scratch(chunks: Iterable[Sequence[LiveRow]], work: Path, cues: bool) -> Scratch:
    fields = FieldRows() if cues else None
    tally = Tally() if cues else None
    pairs = PairRows() if cues else None
    first = last = 0
    postings = Postings()
    with (work / "rows.json").open("wb") as f:
        for chunk in chunks:
            rows = sorted(chunk, key=_seq)
            if not rows:
                continue
            if last and rows[0][0] <= last:
                raise ValueError("a chunk's seqs must all follow those of the chunk before it")
            summaries = [r[9] if r[9] is not None else summary_of(r[3], r[10]) for r in rows]
            texts = [indexed_raw(r[10]) for r in rows]
            _records(f, rows, summaries, texts, fields, pairs)
            if tally is not None:
                for r in rows:
                    tally.add(r[5], r[3], r[8])
            _fill(postings, rows, summaries, texts)
            first, last = first or rows[0][0], rows[-1][0]
    if not last:
        raise ValueError("no rows to write")
    with (work / TOKENS_FILE).open("wb") as f:
        longest = 0
        if fields is not None:
            counted = tally.rows() if tally else {}
            lines = pairs.lines() if pairs else iter(())
            longest = fields.write(f, counted, lines, FIRST_PAIR)
            longest = max(longest, pairs.longest if pairs else 0)
        return Scratch(first, last, max(longest, _vocabulary(postings, f)))


def _records(
    f: BinaryIO,
    rows: Sequence[LiveRow],
    summaries: Sequence[str],
    texts: Sequence[str],
    fields: FieldRows | None,
    pairs: PairRows | None,
) -> None:
    """`rows`' records into `f` as JSON lines, a slice at a time; their field rows into `fields` and their pairs
    of tokens into `pairs` (of their indexed `texts`), while the values are here. A slice is one call of orjson:
    its records each followed by a line break (_LINE_BREAK), made JSON lines by json_lines (no JSON text orjson
    writes holds a line break of its own). DuckDB reads lines for less than half the work of finding each record
    of one array (docs/archive.md "What a file holds")."""
    for at in range(0, len(rows), _SLICE):
        records: list[object] = []
        for row, summary, text in zip(
            rows[at : at + _SLICE], summaries[at : at + _SLICE], texts[at : at + _SLICE], strict=True
        ):
            record, values = _record(row, summary)
            records += (record, _LINE_BREAK)
            if fields is not None:
                spelled = fields.add(row[0], row[10], values)
                if pairs is not None:
                    pairs.add(row[0], row[1], summary, text, values, spelled)
        f.write(json_lines(orjson.dumps(records)))


def _seq(row: LiveRow) -> int:
    return row[0]


def events_select(work: Path) -> str:
    """The query of a scratch folder's records, in seq order: the order they were written in, kept by a cursor
    that preserves insertion order (see ordered_cursor); sorting a month's rows again cost more than zstd."""
    columns = "{" + ", ".join(f"'{n}': '{t}'" for n, t in _COLUMNS) + "}"
    return (
        f"SELECT * FROM read_json({duck.literal(str(work / 'rows.json'))}, format = 'newline_delimited', columns = {columns},"  # noqa: S608
        " maximum_object_size = 16777216)"
    )


def tokens_select(work: Path, longest: int) -> str:
    """The query of a scratch folder's tokens: (term, n, seqs) sorted by term, the field rows first. Its lines
    are in that order already, one a term, for an ordered cursor (ordered_cursor) to keep: nothing is gathered
    or sorted again. A line longer than DuckDB's default (`longest`: a token in about 2 million events of a
    month) is read with a limit that holds it (splitting such lists and gathering them again grouped every token
    of the file: 2.4 times the work, and more memory than the engine has for a month of millions of events)."""
    size = f", maximum_object_size = {1 << longest.bit_length()}" if longest >= _JSON_LINE else ""
    return (
        f"SELECT term, n, seqs FROM read_json({duck.literal(str(work / TOKENS_FILE))}, format = 'newline_delimited',"  # noqa: S608
        f" columns = {{'term': 'VARCHAR', 'n': 'BIGINT', 'seqs': 'BIGINT[]'}}{size})"
    )


def write_month(folder: Path, month: str, rows: Sequence[LiveRow]) -> Built:
    """One archive file (and its tokens) of `rows`, all of `month`, in seq order; synced and in the folder."""
    return write_chunks(folder, month, [rows])


def write_chunks(folder: Path, month: str, chunks: Iterable[Sequence[LiveRow]]) -> Built:
    """One archive file (and its tokens) of the rows of `chunks`, all of `month`, each chunk's seqs above the
    one's before it (see scratch), in seq order; synced and in the folder. A month of millions of events
    written so is read once and written once: written a chunk a file, then merged, it was written twice."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as work_dir:
        work = Path(work_dir)
        made = scratch(chunks, work, cues=True)
        name = new_name(month, made.first_seq, made.last_seq)
        cur = ordered_cursor()
        try:
            cur.execute(
                f"COPY ({events_select(work)}) TO {duck.literal(str(work / 'events.parquet'))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {ROW_GROUP})"
            )
            cur.execute(
                f"COPY ({tokens_select(work, made.longest)}) TO {duck.literal(str(work / 'tokens.parquet'))} ({PARQUET_OPTIONS}, ROW_GROUP_SIZE {TOKEN_ROW_GROUP})"
            )
        finally:
            cur.close()
        synced_rename(work / "tokens.parquet", folder / tokens_name(name))
        synced_rename(work / "events.parquet", folder / name)
    sync_folder(folder)
    built = file_of(name, month, folder)
    return Built(built, (folder / name, folder / tokens_name(name)))


def remove(paths: Iterable[Path]) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
