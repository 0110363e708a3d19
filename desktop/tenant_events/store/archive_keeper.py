"""One pass of the archive's upkeep for a tenant database: move what is due, settle the access history and the
entity directory older than the live tier's setting (access_settle.py, directory_settle.py), merge months, apply the archive's retention and delete what no
reader needs any more. Blocking (it writes Parquet): run it on a worker thread;
each change to the catalog runs on the writer thread (StoreWriter.run_archive_job), one transaction each.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tenant_events.store import access_settle, directory_settle, lake_intake
from tenant_events.store import archive_catalog as catalog
from tenant_events.store import archive_move as move
from tenant_events.store.archive_build import remove
from tenant_events.store.archive_layout import folder_of, tokens_name
from tenant_events.store.schema import connect
from tenant_events.store.writer import StoreWriter
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)


@dataclass
class KeeperPass:
    """What one pass did."""

    moved: int = 0  # events moved out of the live table
    files_written: int = 0
    merged: int = 0  # months merged
    expired: list[str] = field(default_factory=list)  # files dropped by the archive's retention
    deleted: int = 0  # files deleted from disk (garbage and orphans)
    settled: int = 0  # spans of the access history moved into the archive folder (access_settle.py)
    directory_settled: int = 0  # links and entities of the directory moved there (directory_settle.py)
    lake_taken_in: int = 0  # the team archive's events taken into the directory and history (lake_intake.py)


def _snapshot(writer: StoreWriter) -> tuple[catalog.ArchiveSnapshot, set[str]]:
    conn = connect(writer.path, readonly=True)
    try:
        conn.execute("BEGIN")
        try:
            return catalog.snapshot(conn), catalog.known_names(conn)
        finally:
            conn.execute("COMMIT")
    finally:
        conn.close()


def _lake_pending(writer: StoreWriter) -> bool:
    conn = connect(writer.path, readonly=True)
    try:
        return lake_intake.pending(conn)
    finally:
        conn.close()


def keep(
    writer: StoreWriter,
    policy: Retention,
    now: float | None = None,
    move_rows: int = move.MOVE_ROWS,
    lake: Lake | None = None,
    fence: Callable[[], bool] | None = None,
) -> KeeperPass:
    """Move every event that is due (`move_rows` a move), then tidy up; returns what was done. With the team's
    `lake` (archive_lake.py): a relay, whose lease is `fence`, moves them into it; a viewer (no fence) lets go of
    those it holds. LakeBusy: the relay's move did not commit."""
    done = KeeperPass()
    now = time.time() if now is None else now
    writes = fence is not None
    if (
        lake is not None and not writes
    ):  # a viewer: the lake's older events into its directory and history first
        done.lake_taken_in = lake_intake.catch_up(
            writer.path, lambda work: writer.run_archive_job(work).result()
        )
    while (
        planned := move.plan(writer.path, policy, now, move_rows, lake, fence or (lambda: True), writes)
    ) is not None:
        try:
            committed = writer.run_archive_job(lambda c, p=planned: move.commit(c, p)).result()  # type: ignore[misc]
        except BaseException:
            remove(p for b in planned.built for p in b.paths)
            raise
        if not committed:  # another process moved these events first
            remove(p for b in planned.built for p in b.paths)
            break
        done.moved += planned.rows
        done.files_written += len(planned.built)
    if not _lake_pending(writer):  # (a lake row taken in after its past settled would count from then on)
        done.settled = access_settle.settle(writer, now - policy.keep_live_days * 86400, now)
        done.directory_settled = directory_settle.settle(writer, now - policy.keep_live_days * 86400, now)
    snap, _known = _snapshot(writer)
    for files in move.compaction_due(snap, int((now - policy.keep_live_days * 86400) * 1000)):
        merged = move.merge_month(writer.path, files)
        if writer.run_archive_job(lambda c, f=files, m=merged: move.swap(c, f, m)).result():  # type: ignore[misc]
            done.merged += 1
            done.files_written += 1
        else:
            remove(merged.paths)
    snap, known = _snapshot(writer)
    done.expired = move.expired(snap, policy, now)
    if done.expired:
        writer.run_archive_job(lambda c: move.drop_expired(c, done.expired)).result()
    due = writer.run_archive_job(lambda c: move.take_garbage(c, now)).result()
    folder = folder_of(writer.path)
    remove(p for name in due for p in (folder / name, folder / tokens_name(name)))
    leftovers = move.orphans(writer.path, known, now)
    leftovers += access_settle.orphans(writer.path, known, now, move.ORPHAN_AGE)
    leftovers += directory_settle.orphans(writer.path, known, now, move.ORPHAN_AGE)
    move.delete_paths(leftovers)
    done.deleted = len(due) * 2 + len(leftovers)
    if (
        done.moved
        or done.merged
        or done.expired
        or done.settled
        or done.directory_settled
        or done.lake_taken_in
    ):
        log.info(
            "archive of %s: %d team archive events taken in, %d events moved, %d access spans and %d directory"
            " rows settled, %d months merged, %d files expired",
            writer.path.name,
            done.lake_taken_in,
            done.moved,
            done.settled,
            done.directory_settled,
            done.merged,
            len(done.expired),
        )
    return done
