"""The Secret Service (GNOME Keyring, KWallet) over one D-Bus connection per store, for the keyring store's items.

The keyring library opens a new D-Bus connection for every read, write and removal. gnome-keyring-daemon
registers each new connection lazily and races itself doing so: a burst of short-lived connections makes it
abort ("gkd_secret_service_get_pkcs11_session: assertion 'client' failed"), every caller waiting on it gets
"Message recipient disconnected from message bus without replying", and the daemon the bus starts in its place
has the keyring locked. A secret kept in pieces is many calls (a 64,000-character one is 64 pieces: writing,
reading and removing it made about 200 connections), so the store keeps one connection and one session, and
opens them anew only after a call failed (the daemon may have restarted meanwhile).

The items are the keyring library's own (its attributes, application id and label): either reads what the other
wrote, and a version of the app from before this module finds its sign-ins.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Final, TypeVar

T = TypeVar("T")
LOCKED = "it is locked"  # the refusal's text when the keyring is locked (no prompt is shown under a lock)
NOT_SET_UP = "it has not been set up yet"  # … when there is no keyring yet (its password prompt makes one)


class SecretServiceSlots:
    """Get, set and delete items as the keyring library's Secret Service backend `backend` does (its scheme,
    application id and preferred collection), over a connection kept until `close()` or a failure. A call that
    fails on the kept connection is made once more on a new one (a daemon that restarted has none of the old
    one's sessions); when that fails too, its error is raised and the next call connects anew.

    Not thread-safe: the caller holds one lock around each call (one connection carries one call at a time)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._collection: Any = None  # a secretstorage Collection (its connection and session), once opened

    def _opened(self) -> Any:
        if self._collection is None:
            import secretstorage
            from keyring.errors import KeyringLocked
            from secretstorage.exceptions import ItemNotFoundException
            from secretstorage.util import open_session

            connection = secretstorage.dbus_init()
            try:
                path = getattr(self._backend, "preferred_collection", None)
                if path:
                    collection = secretstorage.Collection(connection, path)
                else:  # the default one; none yet: its password prompt makes it, never here (under a lock)
                    try:
                        collection = secretstorage.Collection(connection)
                    except ItemNotFoundException:
                        raise KeyringLocked(NOT_SET_UP) from None
                collection.session = open_session(connection)  # one session for every item read here
            except BaseException:
                connection.close()
                raise
            self._collection = collection
        return self._collection

    def _unlocked(self) -> Any:
        """The collection if it is unlocked; KeyringLocked if not. Never the unlock prompt: the caller holds a
        lock, and a prompt left open would hold it (the store asks first, auth/keyring_unlock.py)."""
        from keyring.errors import KeyringLocked

        collection = self._opened()
        if collection.is_locked():
            raise KeyringLocked(LOCKED)
        return collection

    @property
    def collection_path(self) -> str | None:
        """The collection the backend prefers (None: the default one)."""
        path = getattr(self._backend, "preferred_collection", None)
        return str(path) if path else None

    def _items(self, service: str, username: str) -> list[Any]:
        return list(self._unlocked().search_items(self._backend._query(service, username)))

    def _twice(self, call: Callable[[], T]) -> T:
        from keyring.errors import KeyringError
        from secretstorage.exceptions import PromptDismissedException

        try:
            return call()
        except (KeyringError, PromptDismissedException):  # a dismissed prompt: the user's answer
            self.close()
            raise
        except Exception:
            self.close()
        try:
            return call()
        except BaseException:
            self.close()
            raise

    def get(self, service: str, username: str) -> str | None:
        return self._twice(lambda: self._get(service, username))

    def set(self, service: str, username: str, secret: str) -> None:
        self._twice(lambda: self._set(service, username, secret))

    def delete(self, service: str, username: str) -> bool:
        """Delete the item; False when there was none."""
        return self._twice(lambda: self._delete(service, username))

    def _get(self, service: str, username: str) -> str | None:
        from keyring.errors import KeyringLocked

        for item in self._items(service, username):
            if item.is_locked():
                raise KeyringLocked(LOCKED)
            return str(item.get_secret().decode("utf-8"))
        return None

    def _set(self, service: str, username: str, secret: str) -> None:
        attributes = self._backend._query(service, username, application=self._backend.appid)
        label = f"Password for '{username}' on '{service}'"
        self._unlocked().create_item(label, attributes, secret.encode("utf-8"), replace=True)

    def _delete(self, service: str, username: str) -> bool:
        for item in self._items(service, username):
            item.delete()
            return True
        return False

    def close(self) -> None:
        """Close the connection; the next call opens a new one."""
        collection, self._collection = self._collection, None
        if collection is not None:
            with contextlib.suppress(Exception):
                collection.connection.close()


def secret_service_problem(what: str, exc: BaseException) -> str | None:
    """What a Secret Service (secretstorage or D-Bus) error says, trying to `what`; None for any other error.
    secretstorage raises one "not available" error for five things (no session bus, a bus it cannot reach, no
    keyring daemon on it, a daemon the bus failed to start, no reply): each is said as what happened."""
    if not type(exc).__module__.startswith(("secretstorage", "jeepney")):
        return None
    from secretstorage.exceptions import SecretServiceNotAvailableException

    if isinstance(exc, SecretServiceNotAvailableException):
        return f"the system keyring could not {what}: {_not_available(exc)}; the next try connects again"
    return f"the system keyring refused to {what}: {exc}"


_NOT_AVAILABLE: Final = {  # the D-Bus error under secretstorage's "not available", in words
    "org.freedesktop.DBus.Error.ServiceUnknown": "no keyring daemon is on the session bus (it quit, or none runs)",
    "org.freedesktop.DBus.Error.Spawn.ExecFailed": "the session bus failed to start the keyring daemon",
}


def _not_available(exc: BaseException) -> str:
    cause = exc.__cause__
    if isinstance(cause, KeyError):
        return f"there is no session bus ({exc})"
    if isinstance(cause, ConnectionError | ValueError):
        return f"the session bus cannot be reached ({exc})"
    name = str(getattr(cause, "name", ""))
    if name == "org.freedesktop.DBus.Error.NoReply":
        if "disconnected" in str(exc):  # the bus saw the daemon's connection end before its reply
            return "the keyring daemon quit or restarted in the middle of it"
        return f"the keyring daemon did not answer in time ({exc})"
    return _NOT_AVAILABLE.get(name, f"the Secret Service is not available ({exc})")
