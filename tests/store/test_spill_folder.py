"""The DuckDB engine's spill folder: private to its process, and gone once its process is, however it ended."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from helpers.slack import bound
from tenant_events.spill_folder import PREFIX, STALE_S, UNLOCKED_PREFIX, UNLOCKED_STALE_S

# Starts the engine, says where it spills, and waits for its stdin to close (or for a signal).
_CHILD = """
import sys
from tenant_events.store import duck
print(duck.cursor().sql("SELECT current_setting('temp_directory')").fetchone()[0], flush=True)
sys.stdin.read()
"""


def _engine_process(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        env={**os.environ, "TMPDIR": str(tmp)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, "the engine's process said nothing"
    return proc, Path(line)


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=bound(10))


def test_a_killed_process_folder_goes_with_the_next_engine_and_a_live_ones_stays(tmp_path):
    killed, killed_folder = _engine_process(tmp_path)
    termed, termed_folder = _engine_process(tmp_path)
    live, live_folder = _engine_process(tmp_path)
    try:
        for folder in (killed_folder, termed_folder, live_folder):
            assert folder.parent == tmp_path and folder.name.startswith(PREFIX)
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        (killed_folder / "duckdb_temp_storage_DEFAULT-0.tmp").write_bytes(b"rows that did not fit")
        killed.send_signal(signal.SIGKILL)
        termed.send_signal(signal.SIGTERM)  # the signal's default action: no exit handler runs
        killed.wait(timeout=bound(10))
        termed.wait(timeout=bound(10))
        assert killed_folder.is_dir() and termed_folder.is_dir()
        for folder in (killed_folder, termed_folder, live_folder):
            _age(folder, STALE_S + 5)

        nxt, nxt_folder = _engine_process(tmp_path)
        try:
            assert not killed_folder.exists() and not termed_folder.exists()
            assert live_folder.is_dir(), "the folder of a process that still runs was removed"
            assert nxt_folder.is_dir()
        finally:
            _end(nxt)
    finally:
        _end(live)


def test_a_new_folder_is_never_swept_and_an_ended_process_removes_its_own(tmp_path):
    young = tmp_path / f"{PREFIX}young"
    young.mkdir(mode=0o700)  # unlocked, but just made: perhaps between being made and being locked
    proc, folder = _engine_process(tmp_path)
    assert proc.stdin is not None
    proc.stdin.close()  # ends normally
    assert proc.wait(timeout=bound(20)) == 0
    assert not folder.exists(), "a process that ended normally left its folder"
    assert young.is_dir()


def test_an_earlier_versions_folder_goes_only_when_empty_and_a_day_old(tmp_path):
    empty_old, full_old, empty_new = (tmp_path / f"{UNLOCKED_PREFIX}{n}" for n in ("a", "b", "c"))
    for folder in (empty_old, full_old, empty_new):
        folder.mkdir(mode=0o700)
    (full_old / "duckdb_temp_storage_DEFAULT-0.tmp").write_bytes(b"x")
    _age(empty_old, UNLOCKED_STALE_S + 60)
    _age(full_old, UNLOCKED_STALE_S + 60)
    proc, _folder = _engine_process(tmp_path)
    _end(proc)
    assert not empty_old.exists()
    assert full_old.is_dir() and empty_new.is_dir()


# Makes a scratch folder as a team archive's move does, puts a file in it, says where, and waits (to be killed).
_MOVER = """
import sys, tempfile
from pathlib import Path
from tenant_events.spill_folder import own_folder
assert own_folder() == own_folder()  # one a process
work = Path(tempfile.mkdtemp(dir=own_folder(), prefix="lake-move-"))
(work / "rows.json").write_bytes(b"a move's events")
print(work, flush=True)
sys.stdin.read()
"""


def test_a_killed_movers_scratch_files_go_with_its_folder(tmp_path):
    mover = subprocess.Popen(
        [sys.executable, "-c", _MOVER],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert mover.stdout is not None
    work = Path(mover.stdout.readline().strip())
    assert (work / "rows.json").is_file() and work.parent.parent == tmp_path
    assert work.parent.name.startswith(PREFIX)
    mover.send_signal(signal.SIGKILL)  # mid-move: no exit handler, no clean-up of its own
    mover.wait(timeout=bound(10))
    _age(work.parent, STALE_S + 5)
    nxt, _folder = _engine_process(tmp_path)
    _end(nxt)
    assert not work.parent.exists(), "a killed mover's scratch files stayed"
