"""The Secret Service's unlock prompt, shown on a daemon thread of its own and waited for a bounded time, never
while a lock is held.

A locked keyring (a daemon started anew locks it; a user may lock it) answers a read with a password prompt that a
user may leave open for hours. Asked under a lock — the store's own, or the sign-in lock other processes wait on
(auth/stored_sign_in.py) — that prompt held every other caller for as long as it stayed open. So the keyring
store asks here, before it takes its lock, and waits at most UNLOCK_WAIT seconds (the prompt stays open: the
next call waits on the same one, never opens a second); under `no_prompt()` (the sign-in lock) a locked keyring
is refused at once instead.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Final

UNLOCK_WAIT: Final = 30.0  # seconds a call waits for the unlock prompt before it says the keyring is locked

_NO_PROMPT: ContextVar[bool] = ContextVar("keyring_no_prompt", default=False)


@contextlib.contextmanager
def no_prompt() -> Iterator[None]:
    """Within it (and in the threads `asyncio.to_thread` starts from it) a locked keyring is refused at once."""
    token = _NO_PROMPT.set(True)
    try:
        yield
    finally:
        _NO_PROMPT.reset(token)


def may_prompt() -> bool:
    return not _NO_PROMPT.get()


class UnlockPrompt:
    """One unlock prompt at a time for a keyring collection (`path`; None: the default one, made by its prompt
    when there is none yet), on a D-Bus connection of its own: the store's connection stays free meanwhile."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._outcome: list[str | None] = []

    def unlock(self, wait: float, what: str) -> str | None:
        """None once the collection is unlocked; else why not, beginning with `what` (how the keyring was
        found: "the system keyring is locked"). Waits `wait` s at most; a prompt still open is waited on again."""
        with self._guard:
            if self._thread is None or not self._thread.is_alive():
                self._outcome = []
                self._thread = threading.Thread(
                    target=self._prompt, args=(self._outcome, what), name="keyring-unlock", daemon=True
                )
                self._thread.start()
            thread, outcome = self._thread, self._outcome
        thread.join(wait)
        if outcome:
            return outcome[0]
        return f"{what} (its password prompt was not answered within {wait:g} s)"

    def _prompt(self, outcome: list[str | None], what: str) -> None:
        import secretstorage
        from secretstorage.exceptions import PromptDismissedException

        from tenant_events.auth.secret_service import secret_service_problem

        try:
            connection = secretstorage.dbus_init()
        except Exception as exc:
            outcome.append(f"no system keyring answered ({type(exc).__name__})")
            return
        with contextlib.closing(connection):
            try:
                if self._path:
                    collection = secretstorage.Collection(connection, self._path)
                else:
                    collection = secretstorage.get_default_collection(connection)
                if collection.is_locked():
                    collection.unlock()
                locked = collection.is_locked()
            except PromptDismissedException:  # the new keyring's password prompt
                locked = True
            except Exception as exc:
                outcome.append(secret_service_problem("unlock it", exc) or f"{what} ({type(exc).__name__})")
                return
        outcome.append(f"{what} (its password prompt was dismissed)" if locked else None)
