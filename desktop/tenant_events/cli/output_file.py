"""Where `export`, `access`, `alerts`, `timeline` and `stream` write: one clear line when a path cannot be written
or names one of the data dir's database files, no half file left behind, and a quiet end when the reader of
stdout goes away (`tenant-events export --csv - | head`).

Python ignores SIGPIPE, so a closed pipe shows up as BrokenPipeError on a write, and again when the interpreter
flushes stdout at exit ("Exception ignored ... BrokenPipeError"). Pointing stdout at /dev/null after the first
one is the recipe of the Python docs (signal module, "Note on SIGPIPE").

A command started with stdout closed (`>&-`) has no sys.stdout at all; `ClosedStdout` stands in for it, so the
first write says so in one line (EBADF) instead of failing on None somewhere inside the command.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from tenant_events.errors import StorageError, UserFixableError
from tenant_events.paths import AppPaths, database_file_named


class ClosedStdout(io.TextIOBase):
    """sys.stdout of a process started without one: every write fails as writing to a closed fd would."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass


def stand_in_for_a_closed_stdout() -> None:
    """Started with stdout closed: a `ClosedStdout` in its place (see the module's docstring)."""
    if sys.stdout is None:
        sys.stdout = ClosedStdout()


T = TypeVar("T")


def quiet_stdout() -> None:
    """The reader has gone: send whatever is still buffered for stdout to /dev/null."""
    try:
        fileno = sys.stdout.fileno()
    except (OSError, ValueError):  # closed from the start: nothing is buffered for it
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fileno)
    finally:
        os.close(devnull)


def refuse_database_target(*targets: str | None, paths: AppPaths) -> None:
    """One line, before anything opens it, for an output path that names a database file of the data dir (or its
    -wal or -shm): writing there would destroy the events, and opening it beside a running app drops its locks."""
    for target in targets:
        if not target or target == "-":
            continue
        named = database_file_named(target, paths.data_dir)
        if named is not None:
            raise UserFixableError(
                f"will not write {target}: it is {named.name}, a database file of the data dir {paths.data_dir}",
                "pick another path for the output",
            )


def cannot_write(target: str, exc: OSError) -> UserFixableError:
    """The one line for an output path that failed, naming the path and what to do."""
    parent = Path(target).parent
    if exc.errno == errno.EBADF:
        return UserFixableError(
            f"cannot write {target}: it is closed", "start the command with it open, or give a file name"
        )
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT:
        return UserFixableError(
            f"cannot write {target}: the directory {parent} does not exist",
            "create it first or pick another path",
        )
    if isinstance(exc, IsADirectoryError) or exc.errno == errno.EISDIR:
        return UserFixableError(f"cannot write {target}: it is a directory", "give a file name")
    if isinstance(exc, PermissionError):
        return UserFixableError(f"cannot write {target}: permission denied", "pick a path you can write to")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageError(
            f"cannot write {target}: the disk is full", "free some space or pick another disk"
        )
    return UserFixableError(f"cannot write {target}: {exc.strerror or exc}", "pick another path")


def write_output(target: str, write: Callable[[IO[str]], T]) -> T | None:
    """`write(out)` into `target`, "-" being standard output; None when the reader of stdout stopped early (as
    `| head` does), which is no error."""
    if target != "-":
        return _write_file(Path(target), write)
    try:
        done = write(sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head` has what it wanted: stop quietly
        quiet_stdout()
        return None
    except OSError as exc:  # `> /dev/full`, a full disk behind the redirection
        quiet_stdout()
        raise cannot_write("standard output", exc) from None
    return done


def _write_file(given: Path, write: Callable[[IO[str]], T]) -> T:
    """A regular file (or a new one) is written into a temp file beside it and renamed over it at the end, so a
    failed write leaves no half file; through a symlink, its target is replaced and the link stays. Anything
    else — a FIFO, a device, a socket — is written through, as a shell's `>` would: replacing it with a file
    would leave its reader with nothing."""
    dest = Path(os.path.realpath(given))
    try:
        mode = dest.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise cannot_write(str(given), exc) from None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        try:
            with open(dest, "w", encoding="utf-8", newline="") as out:  # no O_CREAT needed: it exists
                return write(out)
        except OSError as exc:
            raise cannot_write(str(dest), exc) from None
    try:
        fd, tmp = tempfile.mkstemp(dir=dest.parent if str(dest.parent) else ".", prefix=f".{dest.name}.")
    except OSError as exc:
        raise cannot_write(str(dest), exc) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            done = write(out)
        os.replace(tmp, dest)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise cannot_write(str(given), exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return done
