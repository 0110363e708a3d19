"""Where the DuckDB engine (store/duck.py) writes what does not fit its memory, and the sweep of folders left behind.

Each process gets a private (0700) folder of its own in the system's temporary directory: DuckDB's default,
`.tmp` in the working directory, put event data wherever a command was started, and two processes started in
one folder spilled into the same file names (each read the other's data: "Could not read enough bytes").

A process that is killed, or ends on a signal's default action, never runs its exit handlers, so its folder
stayed behind: a test run or a week of commands beside the app left a thousand of them. So the folder is
locked (flock on the folder itself) for as long as its process lives, and each new engine removes the folders
whose lock it can take: their process is gone, whoever it was and however it ended. A folder younger than
STALE_S is never touched (it may be between being made and being locked).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path
from typing import Final

PREFIX: Final = "tenant-events-spill-"
# Earlier versions' folders carried no lock: only an empty one a day old is removed (their process may still run,
# and DuckDB makes its folder again when it needs one).
UNLOCKED_PREFIX: Final = "tenant-events-duckdb-"
STALE_S: Final = 60.0
UNLOCKED_STALE_S: Final = 86_400.0
_held: list[int] = []  # the locks of this process's folders, open until it ends
_own: str | None = None
_own_lock = threading.Lock()


def make_spill_folder() -> str:
    """A new folder of this process's own, locked for its life, after removing the folders of ended processes."""
    sweep(Path(tempfile.gettempdir()))
    path = tempfile.mkdtemp(prefix=PREFIX)
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _held.append(descriptor)
    atexit.register(_remove_empty, path)
    return path


def own_folder() -> str:
    """A folder of this process's own for its scratch files (a team archive move's events and tokens), made once:
    swept with what it holds once the process has ended, however it ended. In the temporary directory itself, a
    relay killed mid-move left its move's files there for good."""
    global _own
    with _own_lock:
        if _own is None:
            _own = make_spill_folder()
        return _own


def _remove_empty(path: str) -> None:
    with contextlib.suppress(OSError):  # a file DuckDB still holds: the next engine's sweep removes it
        os.rmdir(path)


def sweep(parent: Path) -> int:
    """Removes the spill folders in `parent` whose process has ended; how many were removed."""
    now, uid, removed = time.time(), os.getuid(), 0
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        locked = entry.name.startswith(PREFIX)
        if not locked and not entry.name.startswith(UNLOCKED_PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            continue
        age = now - info.st_mtime
        if locked and age >= STALE_S:
            removed += _remove_if_unheld(entry.path)
        elif not locked and age >= UNLOCKED_STALE_S:
            with contextlib.suppress(OSError):
                os.rmdir(entry.path)
                removed += 1
    return removed


def _remove_if_unheld(path: str) -> int:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # its process still runs
            return 0
        shutil.rmtree(path, ignore_errors=True)
        return 0 if os.path.lexists(path) else 1
    finally:
        os.close(descriptor)
