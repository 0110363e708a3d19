"""Settling the access history and the entity directory into the archive folder is whole or not at all, through
a SIGKILL at any moment: across ten rounds or more of a settling process killed at random (and once between a
file and its commit), a reader in this process keeps asking the access review and the directory, and every
answer, during and after, is the answer of a store that never settled (store/access_settle.py,
store/directory_settle.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from helpers.kill_points import stop_between_a_file_and_its_commit
from helpers.slack import bound
from helpers.tenant_days import DAY, state_seen, tenant_days
from tenant_events.store import Batch, StoreWriter, directory_settled
from tenant_events.store.access_reader import AccessReader
from tenant_events.store.access_settled import settled_point
from tenant_events.store.archive_layout import folder_of
from tenant_events.store.directory import STAMP_SHIFT
from tenant_events.store.entity_reader import DirectoryReader
from tenant_events.store.schema import connect

DAYS, KEEP_LIVE, PER_DAY = 36, 4, 160
_SETTLER = """
import sys
from pathlib import Path
from tenant_events.store import StoreWriter, access_settle, directory_settle
path, cutoff = Path(sys.argv[1]), float(sys.argv[2])
writer = StoreWriter(path)
print("open", flush=True)
access_settle.settle(writer, cutoff, cutoff)
directory_settle.settle(writer, cutoff, cutoff)
print("done", flush=True)
writer.close()
"""


def _fill(*paths: Path) -> float:
    """The same simulated days in every store, all live; returns the last day's end."""
    writers = [StoreWriter(p) for p in paths]
    last = 0.0
    try:
        for day, (end, rows) in enumerate(tenant_days(DAYS, PER_DAY, seed=7)):
            for writer in writers:
                for at in range(0, len(rows), 500):
                    writer.commit_sync(Batch(events=rows[at : at + 500], cursor=str(day * 10_000 + at)))
            last = end
        for writer in writers:
            writer.index_all_sync()
    finally:
        for writer in writers:
            writer.close()
    return last


def _held(reader: AccessReader, moment: int) -> set[tuple[object, ...]]:
    return {
        (s.relation, s.ids, s.since, s.since_seq, s.until, s.until_seq) for s in reader.held_at(moment).spans
    }


def _settled_files(path: Path) -> set[str]:
    folder = folder_of(path)
    return {p.name for p in folder.glob("access.*")} | {p.name for p in folder.glob("directory.*")}


def _listed(path: Path) -> set[str]:
    conn = connect(path, readonly=True)
    try:
        names = set()
        for table in ("access_files", "directory_files"):
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                names |= {str(n) for (n,) in conn.execute(f"SELECT name FROM {table}")}
        return names
    finally:
        conn.close()


def test_sigkill_at_any_moment_of_settling_changes_no_answer(tmp_path):
    path, whole = tmp_path / "t.sqlite3", tmp_path / "whole.sqlite3"
    end = _fill(path, whole)
    start_ms = int((end - DAYS * DAY) * 1000)
    moments = [((start_ms + int((d + 0.5) * DAY * 1000)) << STAMP_SHIFT) | 0xFFFFF for d in range(DAYS)]
    with AccessReader(whole) as reader:
        held = {m: _held(reader, m) for m in moments}
    conn = connect(whole, readonly=True)
    try:
        keys = [(str(k), str(i)) for k, i in conn.execute("SELECT kind, id FROM entities")]
    finally:
        conn.close()
    with DirectoryReader(whole) as directory:
        names = directory.entities(keys)
        deleted = [k for k, e in names.items() if e.deleted]
        states = {
            k: state_seen(directory, *k) for k in random.Random(1).sample(deleted, min(len(deleted), 20))
        }

    failures: list[object] = []
    reads = 0
    stop = threading.Event()

    def watch() -> None:  # a reader asking all along, as the window's Access tab and names do
        nonlocal reads
        rng = random.Random(2)
        with AccessReader(path) as access, DirectoryReader(path) as directory:
            while not stop.is_set():
                moment = rng.choice(moments)
                if _held(access, moment) != held[moment]:
                    failures.append(("held at", moment))
                if directory.entities(keys) != names:
                    failures.append("names")
                key = rng.choice(list(states))
                if state_seen(directory, *key) != states[key]:
                    failures.append(("state", key))
                reads += 1

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[2] / "desktop"), *sys.path]),
    }
    rng = random.Random(42)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    between = 0
    try:
        # ten rounds at least, the cutoff a day later each time (each has something to settle), and more (up to
        # 24) until one kill has landed between a settled file and its commit
        for round_ in range(24):
            if round_ >= 10 and between:
                break
            cutoff = end - max(28 - round_, KEEP_LIVE + 1) * DAY
            child = subprocess.Popen(
                [sys.executable, "-c", _SETTLER, str(path), str(cutoff)],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert child.stdout is not None and child.stdout.readline() == "open\n"
            if round_ < 10:
                time.sleep(rng.uniform(0.0, 1.5))  # any moment
            else:
                between += stop_between_a_file_and_its_commit(
                    child, lambda: _settled_files(path), lambda: _listed(path)
                )
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        child = subprocess.Popen(
            [sys.executable, "-c", _SETTLER, str(path), str(end - KEEP_LIVE * DAY)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        out, _err = child.communicate(timeout=bound(120))
        assert out.endswith("done\n")
    finally:
        stop.set()
        watcher.join(60)
    assert not failures, failures[:5]
    assert reads >= 10, reads
    assert between >= 1, "no kill landed between a settled file and its commit"
    conn = connect(path, readonly=True)
    try:
        for point in (settled_point(conn), directory_settled.settled_point(conn)):
            assert point >> STAMP_SHIFT >= int((end - (KEEP_LIVE + 1) * DAY) * 1000), (
                "the last settling finished"
            )
    finally:
        conn.close()
    with AccessReader(path) as access, DirectoryReader(path) as directory:
        for moment in moments:
            assert _held(access, moment) == held[moment]
        assert directory.entities(keys) == names
        for key, state in states.items():
            assert state_seen(directory, *key) == state
