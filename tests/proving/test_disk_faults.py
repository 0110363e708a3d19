"""Disk faults while streaming (proving ground, faults): a full disk and a read-only data dir (a small tmpfs mounted
for the test; needs root, skipped otherwise), and a corrupted database file. The real CLI against the real
simulator: what was committed stays, the user gets one clear line, and the stream resumes once the disk is
usable again — every event exactly once, in order.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.fixtures_engine import OLD, cli, reference_ids
from helpers.slack import bound
from helpers.small_disk import remount, small_disk_at
from tenant_events.errors import StorageError
from tenant_events.store import EventReader
from tenant_events.store.database_open import open_database

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs: big enough for the schema, too small for the simulator's backlog."""
    with small_disk_at(tmp_path / f"disk-{uuid.uuid4().hex[:6]}") as mnt:
        yield mnt


@pytest.fixture
def roomy_disk(tmp_path: Path) -> Iterator[Path]:
    """A 32 MB tmpfs, for a fault other than space: room for the store, its write-ahead log at the size it reaches
    while the rules' process reads beside the writer (a checkpoint waits for its snapshot), and more events."""
    with small_disk_at(tmp_path / f"disk-{uuid.uuid4().hex[:6]}", size="32m") as mnt:
        yield mnt


def count(db: Path) -> int:
    """Stored events, 0 while the file is missing, being created, or still the damaged one."""
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:
        return 0


def stream(sim, data: Path, *extra: str) -> subprocess.Popen[str]:
    return cli(
        "stream",
        "--base-url",
        sim.base_url,
        "--name",
        "disk",
        "--data-dir",
        str(data),
        "--from-timestamp",
        OLD,
        "--stall-timeout",
        "2",
        *extra,
        env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600)},
    )


def run_until_stored(sim, data: Path, db: Path, total: int, limit: float = 60) -> str:
    proc = stream(sim, data)
    deadline = time.monotonic() + bound(limit)
    try:
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1]
            if count(db) >= total:
                break
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    files = sorted((p.name, p.stat().st_size) for p in db.parent.iterdir())
    assert count(db) >= total, (
        f"{count(db)} of {total} stored within {bound(limit):.0f} s, beside {files}; the stream said:\n{err}"
    )
    return err


def export_ids(db: Path) -> list[str]:
    with EventReader(db) as reader:
        return [e.event_id for e, _ in reader.export_iter()]


def wait_line(proc: subprocess.Popen[str], needle: str, seen: list[str], limit: float = 120) -> str:
    """Read the CLI's stderr until a line holds `needle` (the process keeps running)."""
    assert proc.stderr is not None
    deadline = time.monotonic() + limit
    for line in proc.stderr:
        seen.append(line)
        if needle in line:
            return line
        assert time.monotonic() < deadline, "".join(seen[-10:])
    raise AssertionError(f"the CLI exited {proc.wait()} without saying {needle!r}: {''.join(seen[-10:])}")


def wait_stored(
    db: Path, total: int, proc: subprocess.Popen[str], seen: list[str], still: float = 30
) -> None:
    """Until `total` events are stored by the same process, going on by itself. A catch-up beside other heavy jobs
    is slow but never still: this fails once the count has not grown for `still` seconds (stretched for load)."""
    stored, moved = count(db), time.monotonic()
    while stored < total:
        assert proc.poll() is None, (
            f"the CLI exited {proc.returncode} with {stored} of {total} stored: " + "".join(seen[-10:])
        )
        time.sleep(0.1)
        now = count(db)
        if now > stored:
            stored, moved = now, time.monotonic()
        assert time.monotonic() - moved < bound(still), (
            f"{stored} of {total} stored, none more for {bound(still):.0f} s:\n" + "".join(seen[-10:])
        )


def keep_reading(proc: subprocess.Popen[str], seen: list[str]) -> threading.Thread:
    """Go on reading the CLI's stderr into `seen` (a pipe nobody reads stops the CLI once it is full; a failure
    then says what the CLI said last)."""
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: seen.extend(proc.stderr or ()), daemon=True)
    reader.start()
    return reader


@pytest.mark.expect_warning_logs
def test_a_full_disk_pauses_with_a_clear_message_keeps_what_was_committed_and_resumes_by_itself(
    make_simulator, small_disk
):
    sim = make_simulator(backlog=6_000, rate=0, burst_every=0, heartbeat=0.2)  # about 3x what the disk holds
    sim.faults(duplicate_every=13)
    db = small_disk / "tenants" / "disk.sqlite3"
    proc = stream(sim, small_disk)
    seen: list[str] = []
    try:
        told = wait_line(proc, "tenant-events: paused", seen)
        listening = keep_reading(proc, seen)
        assert str(db) in told and "disk is full" in told and "free disk space" in told, told
        assert "retrying in" in told, told
        kept = count(db)
        assert kept > 0, "nothing was committed before the disk filled (make the tmpfs larger)"
        with EventReader(db) as reader:
            assert reader.cursor().offset, "the committed cursor survived"
        remount(small_disk, "size=200m")
        total = int(sim.stats()["events"])
        wait_stored(db, total, proc, seen)  # the same process goes on by itself
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    listening.join(timeout=30)
    assert proc.returncode == 0, "".join(seen[-10:])
    ids = export_ids(db)
    assert len(ids) == len(set(ids)) == total
    assert ids == reference_ids(sim, total)


def test_a_read_only_data_dir_stops_with_a_clear_message_and_resumes_when_writable(
    make_simulator, roomy_disk
):
    sim = make_simulator(backlog=500, rate=0, burst_every=0, heartbeat=0.2)
    db = roomy_disk / "tenants" / "disk.sqlite3"
    run_until_stored(sim, roomy_disk, db, 500)
    remount(roomy_disk, "ro")
    sim.emit(300)
    proc = stream(sim, roomy_disk)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        remount(roomy_disk, "rw")
    assert proc.returncode == 5, err
    last = err.strip().splitlines()[-1]
    assert str(db) in last and "check the data dir" in last, last  # SQLite only says "unable to open"
    assert count(db) == 500
    run_until_stored(sim, roomy_disk, db, 800)
    ids = export_ids(db)
    assert len(ids) == len(set(ids)) == 800 and ids == reference_ids(sim, 800)


_DIES_WITH_ITS_STORE_OPEN = """
import os, signal, sys
from pathlib import Path
from tenant_events.store import StoreWriter
from tenant_events.store.schema import connect
writer = StoreWriter(Path(sys.argv[1]))
writer.close()
conn = connect(Path(sys.argv[1]))
conn.execute("SELECT count(*) FROM events").fetchone()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_store_left_by_a_crash_on_a_file_system_now_read_only_says_check_the_data_dir(roomy_disk):
    """A process killed with its store open leaves the -wal and -shm beside it; with the file system then made
    read-only, SQLite still opens the store, and the first thing that fails is the app's own tightening of the
    file's mode: said as the store's failure, with the data dir to check, never as a bare OS error."""
    db = roomy_disk / "t.sqlite3"
    subprocess.run([sys.executable, "-c", _DIES_WITH_ITS_STORE_OPEN, str(db)], check=False, timeout=60)
    assert db.with_name(db.name + "-wal").exists() and db.with_name(db.name + "-shm").exists()
    remount(roomy_disk, "ro")
    try:
        with pytest.raises(StorageError) as refused:
            open_database(db)
    finally:
        remount(roomy_disk, "rw")
    assert str(db) in str(refused.value) and "check the data dir" in str(refused.value), refused.value


def test_a_corrupted_database_is_moved_aside_the_user_told_and_a_fresh_one_started(make_simulator, tmp_path):
    sim = make_simulator(backlog=400, rate=0, burst_every=0, heartbeat=0.2)
    db = tmp_path / "tenants" / "disk.sqlite3"
    run_until_stored(sim, tmp_path, db, 400)
    size = db.stat().st_size
    with db.open("r+b") as f:  # keep the header, scramble the b-tree pages behind it
        f.seek(4096)
        f.write(os.urandom(max(size - 8192, 4096)))
    err = run_until_stored(sim, tmp_path, db, 400)
    aside = [p for p in db.parent.iterdir() if p.name.startswith("disk.") and "corrupt" in p.name]
    assert aside, f"no moved-aside copy next to {db}: {sorted(p.name for p in db.parent.iterdir())}"
    told = [line for line in err.splitlines() if str(aside[0].name) in line or "corrupt" in line.lower()]
    assert told, f"the user was not told: {err}"
    assert export_ids(db) == reference_ids(sim, 400), (
        "the fresh database holds the stream again from the start"
    )
    shutil.rmtree(tmp_path / "tenants", ignore_errors=True)


@pytest.mark.expect_warning_logs
def test_the_full_disk_message_says_the_disk_is_full(small_disk):
    """D6: the writer's ROLLBACK after SQLITE_FULL used to replace the real error with "cannot rollback"."""
    from helpers.events_factory import row
    from tenant_events.errors import StorageError
    from tenant_events.store import Batch, StoreWriter

    writer = StoreWriter(small_disk / "full.sqlite3")
    try:
        with pytest.raises(StorageError) as info:
            for n in range(0, 1_000_000, 100):  # small batches with pauses, as a live stream commits them
                writer.commit_sync(Batch(events=[row(i) for i in range(n, n + 100)], cursor=f"off-{n}"))
                time.sleep(0.02)
    finally:
        writer.close()
    assert "disk is full" in str(info.value), str(info.value)


@pytest.mark.expect_warning_logs
def test_the_engine_waits_for_space_and_resumes_by_itself(make_simulator, small_disk):
    from helpers.fixtures_engine import follow
    from tenant_events.values.stream_states import StreamState

    sim = make_simulator(backlog=6_000, rate=0, burst_every=0, heartbeat=0.2)  # about 3x what the disk holds
    db = small_disk / "tenants" / "e.sqlite3"
    freed: list[float] = []

    def free_space_once_it_is_full(rec) -> None:
        if not freed and any("disk" in s.message or s.reason == "storage" for s in rec.states):
            remount(small_disk, "size=200m")
            freed.append(time.monotonic())

    rec = follow(
        sim,
        db,
        until=lambda r: count(db) >= 6_000,
        during=free_space_once_it_is_full,
        timeout=60,
        from_timestamp=OLD,
        stall_timeout=2.0,
        storage_retry=0.5,
    )
    assert freed, "the disk never filled"
    assert not any(s.state is StreamState.ERROR for s in rec.states), [s.message for s in rec.states][-3:]
    paused = rec.first("storage")
    assert paused.state is StreamState.PAUSED and "disk is full" in paused.message and paused.retry_at
    assert export_ids(db) == reference_ids(sim, 6_000)


def test_indexing_that_meets_a_full_disk_is_said_in_words_not_logged_as_a_failure(small_disk, caplog):
    """The full-text index is written while the writer is idle: meeting a full disk there is the disk's doing (the
    stream's paused commits tell the user), a warning in words — never a failure logged with a traceback."""
    import logging

    from helpers.events_factory import row
    from tenant_events.errors import StorageError
    from tenant_events.store import Batch, StoreWriter

    caplog.set_level(logging.WARNING, logger="tenant_events.store.writer")

    def indexing_said() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "full-text indexing" in r.getMessage()]

    writer = StoreWriter(small_disk / "index.sqlite3")
    deadline, n, full = time.monotonic() + bound(60), 0, False
    try:
        while not indexing_said():
            assert time.monotonic() < deadline, "the writer's indexing never met the full disk"
            if not full:  # catch-up batches (more than a live batch): their indexing waits for an idle writer
                try:
                    writer.commit_sync(Batch(events=[row(i) for i in range(n, n + 100)], cursor=f"off-{n}"))
                    n += 100
                except StorageError:
                    full = True  # from now on the writer is idle, and indexes
            time.sleep(0.05)
    finally:
        writer.close()
    said = indexing_said()
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in said), [
        r.getMessage() for r in said
    ]
    assert "full" in said[0].getMessage(), said[0].getMessage()
