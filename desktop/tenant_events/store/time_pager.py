"""One tenant database's events in event-time order, from a keyset position, for the all-tenants view (all_tenants.py).

Plans, because SQLite has no statistics to choose between the time index and the others:
  no text, common or no type filter  walk the (time_ms, event_id) index from the position, skipping what the
                                     other conditions reject
  a rare type (< FEW_ROWS rows)      the (type, seq) index, sorted by time (cost follows the matches)
  rare text (< FEW_MATCHES)          the full-text matches, sorted by time (query.where_clause)
  common text                        walk the time index in chunks of CHUNK rows and keep those the full-text
                                     index has: one rowid-range lookup per run of neighbouring seqs (time order
                                     is nearly stored order), the unindexed tail by substring. Sorting every
                                     match of "example" (400,000 of a million rows) took 1.3 s a store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import orjson

from tenant_events.store import team_view
from tenant_events.store.archive_alert_terms import alerts_named
from tenant_events.store.archive_catalog import ArchiveSnapshot
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.archive_reader import ArchiveReader
from tenant_events.store.connections import HeldConnection, HoldsConnection
from tenant_events.store.live_walk import COLUMNS as _COLUMNS
from tenant_events.store.live_walk import event_of as _event
from tenant_events.store.query import text_parts, where_clause
from tenant_events.store.schema import small_reader
from tenant_events.values.events import EventFilter, StoredEvent

MAX_SEQ: Final = 2**63 - 1
FEW_ROWS: Final = 20_000
FEW_MATCHES: Final = 2_000  # counting a common prefix's matches costs more than counting a type's rows
CHUNK: Final = 2_000
_TYPES_SQL: Final = "SELECT 1 FROM events WHERE type IN ({})"  # filled with "?" marks only
_RUN_GAP: Final = 256  # seqs further apart than this start a new full-text range lookup


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    """Sorted seqs as (low, high) ranges that leave out gaps wider than _RUN_GAP."""
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and seq - runs[-1][1] <= _RUN_GAP:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


class TimePager(HoldsConnection):
    """A tenant's rows newest- or oldest-first by (time_ms, seq) from a position; its own read connection."""

    def __init__(self, tenant: str, path: Path) -> None:
        self.tenant = tenant
        self._held = HeldConnection(path, lambda: small_reader(path))
        self.archive = ArchiveReader(folder_of(path))

    def close(self) -> None:
        self._held.close()
        self.archive.close()

    def _few(self, sql: str, params: Sequence[object], few: int) -> bool:
        count = f"SELECT count(*) FROM ({sql} LIMIT ?)"  # noqa: S608 - callers pass constants
        return int(self._conn.execute(count, [*params, few]).fetchone()[0]) < few

    def page(
        self, f: EventFilter, position: tuple[int, int] | None, limit: int, newest_first: bool
    ) -> list[tuple[int, StoredEvent]]:
        """Up to `limit` (time_ms, event) past `position` — (time_ms, seq), exclusive — in the given direction."""
        with self._lock:
            self._conn.execute(
                "BEGIN"
            )  # one snapshot: the indexer may move the full-text watermark, the archive its rows, meanwhile
            try:
                snap = self.archive.use(team_view.snapshot(self._conn, self.archive.folder))
                alerts = alerts_named(self._conn, f) if snap.files else {}
                upto = int(
                    self._conn.execute("SELECT value FROM counters WHERE name = 'fts_upto'").fetchone()[0]
                )
                live = self._live(f, position, limit, newest_first, upto)
            finally:
                self._conn.execute("COMMIT")
        return self._with_archive(live, snap, f, alerts, position, limit, newest_first)

    def _live(
        self, f: EventFilter, position: tuple[int, int] | None, limit: int, newest_first: bool, upto: int
    ) -> list[tuple[int, StoredEvent]]:
        if f.text.strip():
            match = text_parts(f.text)[0]
            if not self._few("SELECT 1 FROM events_fts WHERE events_fts MATCH ?", [match], FEW_MATCHES):
                return self._text_walk(f, position, limit, newest_first, upto)
            source = "events"
        elif f.types and self._few(
            _TYPES_SQL.format(",".join("?" * len(f.types))), sorted(f.types), FEW_ROWS
        ):
            source = "events"
        else:
            source = "events INDEXED BY events_time_id"
        where, params = where_clause(f, upto)
        rows = self._rows(source, where, params, position, limit, newest_first)
        return [(int(r[-1]), _event(r[:-1])) for r in rows]

    def _with_archive(
        self,
        live: list[tuple[int, StoredEvent]],
        snap: ArchiveSnapshot,
        f: EventFilter,
        alerts: Mapping[int, tuple[int, ...]],
        position: tuple[int, int] | None,
        limit: int,
        newest_first: bool,
    ) -> list[tuple[int, StoredEvent]]:
        """The live rows merged with the archive's by (time, seq): event time does not follow the tiers' cut."""
        if not snap.files:
            return live
        older = self.archive.by_time(snap, f, alerts, position, limit, newest_first)
        merged = sorted(live + older, key=lambda r: (r[0], r[1].seq), reverse=newest_first)
        return merged[:limit]

    def _rows(
        self,
        source: str,
        where: str,
        params: list[object],
        position: tuple[int, int] | None,
        limit: int,
        newest_first: bool,
        columns: str = f"{_COLUMNS}, time_ms",
    ) -> list[Any]:
        order, past = ("DESC", "<") if newest_first else ("", ">")
        if position is not None:
            mark = "<=" if newest_first else ">="
            where = f"time_ms {mark} ? AND (time_ms {past} ? OR seq {past} ?) AND {where}"
            params = [position[0], position[0], position[1], *params]
        sql = f"SELECT {columns} FROM {source} WHERE {where} ORDER BY time_ms {order}, seq {order} LIMIT ?"  # noqa: S608
        return self._conn.execute(sql, [*params, limit]).fetchall()

    def _text_walk(
        self, f: EventFilter, position: tuple[int, int] | None, limit: int, newest_first: bool, upto: int
    ) -> list[tuple[int, StoredEvent]]:
        match, tail, tail_params = text_parts(f.text)
        where, params = where_clause(replace(f, text=""), upto)
        kept: list[int] = []
        while len(kept) < limit:
            chunk = self._rows(
                "events INDEXED BY events_time_id",
                where,
                params,
                position,
                CHUNK,
                newest_first,
                columns="seq, time_ms",
            )
            if not chunk:
                break
            seqs = [r[0] for r in chunk]
            hits: set[int] = set()
            for low, high in _runs(sorted(s for s in seqs if s <= upto)):
                hits.update(
                    int(r[0])
                    for r in self._conn.execute(
                        "SELECT rowid FROM events_fts WHERE events_fts MATCH ? AND rowid BETWEEN ? AND ?",
                        (match, low, high),
                    )
                )
            recent = [s for s in seqs if s > upto]
            if recent:
                hits.update(
                    int(r[0])
                    for r in self._conn.execute(
                        f"SELECT seq FROM events WHERE seq IN (SELECT value FROM json_each(?)) AND {tail}",  # noqa: S608
                        [orjson.dumps(recent).decode(), *tail_params],
                    )
                )
            kept += [s for s in seqs if s in hits][: limit - len(kept)]
            if len(chunk) < CHUNK:
                break
            position = (chunk[-1][1], chunk[-1][0])
        if not kept:
            return []
        rows = self._conn.execute(
            f"SELECT {_COLUMNS}, time_ms FROM events WHERE seq IN (SELECT value FROM json_each(?))",  # noqa: S608
            (orjson.dumps(kept).decode(),),
        ).fetchall()
        by_seq = {int(r[0]): r for r in rows}
        return [(int(by_seq[s][-1]), _event(by_seq[s][:-1])) for s in kept]
