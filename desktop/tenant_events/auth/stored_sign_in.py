"""Where a profile's sign-in is kept, and the lock that lets processes sharing it refresh one at a time.

A stored refresh token belongs to one tenant: its keyring slot is named after the profile AND a digest of the
issuer, client ID, stream URL and data dir it was made for. A profile that now points elsewhere (another tenant,
another client) looks up another slot and finds nothing, so a token is never sent to a token endpoint it was not
issued by; the old slot is cleared by sign-out. Slots of the old form (the profile name alone) are never read.

With refresh-token rotation every refresh spends the token: two processes on one profile that both refreshed
with the token they read at start would spend it twice, and the tenant revokes the whole family (both signed
out). `refresh_lock` holds an OS file lock in the data dir (`sign-ins/<slot>.lock`); the refresh takes it,
reads the stored token again (another process may have rotated it), uses it and saves the new one before
letting go. Nothing under the lock shows the keyring's unlock prompt (a user may leave it open for hours while
every other process waits): the caller unlocks first (`unlock_first`), and a keyring found locked under the lock
is refused at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tenant_events.auth.keyring_unlock import no_prompt
from tenant_events.auth.secret_store import digest
from tenant_events.errors import SignInBusy
from tenant_events.settings import TenantProfile
from tenant_events.url_forms import normalize_url

log = logging.getLogger(__name__)

LOCK_WAIT = 120.0  # seconds a refresh waits for another process's refresh (a slow token endpoint, a retry)
SAY_WAIT_AFTER = 0.5  # seconds of waiting for another process's refresh before it is said (`on_wait`)
LOCK_WAIT_ENV = "TENANT_EVENTS_SIGNIN_LOCK_WAIT"  # another bound in seconds (tests of a lock held elsewhere)


def lock_wait() -> float:
    """LOCK_WAIT, or the bound the environment names (a positive number of seconds; anything else is ignored)."""
    text = os.environ.get(LOCK_WAIT_ENV, "")
    try:
        wait = float(text)
    except ValueError:
        return LOCK_WAIT
    return wait if 0 < wait < float("inf") else LOCK_WAIT


@dataclass(frozen=True)
class SignInSlot:
    """One profile's sign-in: `key` names its secret-store slot, `lock_file` coordinates its refreshes."""

    name: str  # the profile, for messages
    key: str  # "<name>@<digest of issuer, client ID, stream URL and data dir>"
    legacy_key: str  # the old slot (profile name alone): cleared on sign-out, never read
    lock_file: Path | None  # None: nothing shared it (tests, session-only use)


def binding_digest(profile: TenantProfile, data_dir: Path | None) -> str:
    """What a stored sign-in is bound to, as 16 hex digits."""
    where = str(data_dir.resolve()) if data_dir is not None else ""
    return digest(profile.issuer, profile.client_id, normalize_url(profile.base_url), where)


def slot_for(profile: TenantProfile, data_dir: Path | None = None) -> SignInSlot:
    """The slot of `profile` in the data dir `data_dir` (None: no lock file, e.g. a test's memory store)."""
    key = f"{profile.name}@{binding_digest(profile, data_dir)}"
    lock = data_dir / "sign-ins" / f"{key}.lock" if data_dir is not None else None
    return SignInSlot(name=profile.name, key=key, legacy_key=profile.name, lock_file=lock)


def _try_lock(handle: IO[bytes]) -> bool:
    """Take the lock without waiting; False when another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _open_lock_file(path: Path) -> IO[bytes] | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        log.warning("cannot open the sign-in lock %s (%s): refreshing without it", path, exc.strerror)
        return None
    return os.fdopen(fd, "r+b", buffering=0)


@contextlib.asynccontextmanager
async def refresh_lock(
    slot: SignInSlot, wait: float | None = None, on_wait: Callable[[], None] | None = None
) -> AsyncIterator[None]:
    """Hold the slot's file lock (polled, so a cancelled wait leaves nothing behind); SignInBusy (not signed out:
    the sign-in is fine, that process is busy with it) when another process holds it for longer than `wait`
    seconds (default: `lock_wait()`). `on_wait` is called once if the wait lasts SAY_WAIT_AFTER s: the caller
    says what it waits for while it waits, not only when the wait runs out."""
    wait = lock_wait() if wait is None else wait
    if slot.lock_file is None:
        yield
        return
    handle = await asyncio.to_thread(_open_lock_file, slot.lock_file)
    if handle is None:
        yield
        return
    try:
        started = time.monotonic()
        pause, told = 0.01, on_wait is None
        while not _try_lock(handle):
            waited = time.monotonic() - started
            if waited > wait:
                raise SignInBusy(slot.name, wait)
            if not told and waited >= SAY_WAIT_AFTER and on_wait is not None:
                told = True
                on_wait()
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.2)
        try:
            with no_prompt():  # a locked keyring is refused here, never prompted for: the prompt comes first
                yield
        finally:
            _unlock(handle)
    finally:
        handle.close()
