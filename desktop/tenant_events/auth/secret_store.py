"""Where refresh tokens live: the OS keyring, one entry per tenant profile. The ONLY module importing keyring (with
auth/secret_service.py, its Secret Service over one D-Bus connection).

Only the refresh token is stored; access and ID tokens stay in memory (Windows caps a credential at 2560 bytes,
and JWTs are long). A secret longer than 1000 characters is kept in pieces (auth/secret_pieces.py), at most
MAX_SECRET characters in all: a longer one is refused (SecretTooLong), never kept in part. Every slot but the old-form ones is bound to what it
is for (`bound_slot`): a data dir's slot is never another data dir's. A keyring that is missing, locked or
dismissed (keyring#569, #69, #77, poetry#6640) makes `open_secret_store()` return a session-only store plus a
notice; a plaintext file backend is never used (keyrings.alt's are refused).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from tenant_events.auth import secret_pieces as pieces

log = logging.getLogger(__name__)

SERVICE = "tenant-events"
MAX_SECRET = pieces.CHUNK * pieces.MAX_CHUNKS


class SecretTooLong(ValueError):
    """A secret longer than the keyring slots keep (MAX_SECRET characters)."""


def check_secret_length(what: str, secret: str) -> str:
    """`secret` if a slot can keep it whole; SecretTooLong naming `what` otherwise."""
    if len(secret) > MAX_SECRET:
        raise SecretTooLong(f"{what} is {len(secret):,} characters; the keyring keeps at most {MAX_SECRET:,}")
    return secret


def digest(*bound: object) -> str:
    """16 hex digits of what a slot is bound to (JSON of `bound`: no two lists of parts give the same text)."""
    return hashlib.sha256(json.dumps(list(bound)).encode()).hexdigest()[:16]


def bound_slot(prefix: str, name: str, data_dir: object, *what: object) -> str:
    """`<prefix><name>@<digest>`: the slot of `name` in one data dir, for one thing (a hub's URLs and user…) —
    another data dir, or a profile that now points elsewhere, looks up another slot and finds nothing."""
    return f"{prefix}{name}@{digest(prefix, str(data_dir), name, *what)}"


class SecretStoreUnavailable(Exception):
    """The keyring cannot be used right now; the message says why."""


class SecretStore(Protocol):
    """A per-tenant secret slot; `persistent` is False for the session-only fallback."""

    @property
    def persistent(self) -> bool: ...

    @property
    def description(self) -> str: ...

    def get(self, tenant: str) -> str | None: ...

    def set(self, tenant: str, secret: str) -> None: ...

    def delete(self, tenant: str) -> None: ...


class MemorySecretStore:
    """Session-only storage (no usable keyring) and the fake for unit tests."""

    def __init__(self, description: str = "memory (this session only)") -> None:
        self.persistent = False
        self.description = description
        self._items: dict[str, str] = {}

    def get(self, tenant: str) -> str | None:
        return self._items.get(tenant)

    def set(self, tenant: str, secret: str) -> None:
        self._items[tenant] = check_secret_length("the secret", secret)

    def delete(self, tenant: str) -> None:
        self._items.pop(tenant, None)

    def __repr__(self) -> str:
        return f"MemorySecretStore({len(self._items)} item(s))"


# slot prefix, account prefix, what it holds (hub/credentials.py, destinations/registry.py); else a refresh token
_KINDS: Final = (("hub:", "hub-credentials:", "the hub's credentials"),
                 ("destination:", "alert-destination:", "the destination's URL"))  # fmt: skip


def _account(tenant: str) -> str:
    kind = next((k for k in _KINDS if tenant.startswith(k[0])), None)
    return f"{kind[1]}{tenant[len(kind[0]) :]}" if kind else f"refresh-token:{tenant}"


class KeyringSecretStore:
    """The OS keyring through `keyring` (Secret Service, macOS Keychain, Windows Credential Manager).

    The Secret Service is used over one D-Bus connection of this store's (auth/secret_service.py): the keyring
    library's connection per call makes gnome-keyring abort. One lock keeps the store's calls one at a time; a
    call that fails there is made once more on a new connection (the daemon may have restarted)."""

    def __init__(self) -> None:
        import keyring

        from tenant_events.auth.secret_service import SecretServiceSlots

        self._keyring = keyring
        backend = keyring.get_keyring()
        self.persistent = True
        self.description = f"system keyring ({type(backend).__name__})"
        secret_service = type(backend).__module__ == "keyring.backends.SecretService"
        self._service = SecretServiceSlots(backend) if secret_service else None
        self._lock = threading.RLock()

    def _call(self, verb: str, fn: object, service: str, account: str, *args: str) -> object:
        from keyring.errors import KeyringError

        from tenant_events.auth.secret_service import secret_service_problem

        what = f"{verb} {next((k[2] for k in _KINDS if account.startswith(k[1])), 'the sign-in')}"  # it holds
        try:
            return fn(service, account, *args)  # type: ignore[operator]
        except Exception as exc:
            if isinstance(exc, KeyringError):
                raise SecretStoreUnavailable(f"the system keyring refused to {what}: {exc}") from exc
            # D-Bus/secretstorage errors are not all KeyringErrors (secretstorage#33)
            problem = secret_service_problem(what, exc)
            raise SecretStoreUnavailable(
                problem or f"the system keyring failed to {what}: {exc.__class__.__name__}"
            ) from exc

    def _read(self, account: str) -> str | None:
        fn = self._service.get if self._service is not None else self._keyring.get_password
        value = self._call("read", fn, SERVICE, account)
        return value if isinstance(value, str) else None

    def _write(self, account: str, secret: str) -> None:
        fn = self._service.set if self._service is not None else self._keyring.set_password
        self._call("save", fn, SERVICE, account, secret)

    def _remove(self, account: str) -> None:
        from keyring.errors import PasswordDeleteError

        if self._service is not None:
            self._call("remove", self._service.delete, SERVICE, account)  # already gone is fine
            return
        try:
            self._call("remove", self._keyring.delete_password, SERVICE, account)
        except SecretStoreUnavailable as exc:
            if not isinstance(exc.__cause__, PasswordDeleteError):  # already gone is fine
                raise

    def get(self, tenant: str) -> str | None:
        with self._lock:
            return pieces.read(_account(tenant), self._read)

    def set(self, tenant: str, secret: str) -> None:
        """Short values go in the slot itself, long ones in pieces (auth/secret_pieces.py). SecretTooLong for
        a secret over MAX_SECRET characters (nothing is written)."""
        check_secret_length("the secret", secret)
        with self._lock:
            pieces.write(_account(tenant), secret, self._read, self._write, self._remove)

    def delete(self, tenant: str) -> None:
        """The slot and every piece of it."""
        with self._lock:
            pieces.delete(_account(tenant), self._read, self._remove)


@dataclass(frozen=True)
class OpenedStore:
    store: SecretStore
    notice: str | None  # set when sign-in will last only this session
    reason: str | None = None  # why, in a few words (the notice's middle part)


# What the Secret Service says before anything is read: a read of a locked or new keyring opens a password prompt.
ServiceState = Literal["locked", "new", "absent"]
_STATE_TEXT: dict[str, str] = {
    "locked": "the system keyring is locked",
    "new": "the system keyring has not been set up yet",
    "absent": "no system keyring is available (no Secret Service on the session bus)",
}


def secret_service_state() -> ServiceState | None:
    """'locked', 'new' (no default keyring yet) or 'absent' without prompting; None when it looks usable or
    the backend is not the Secret Service (macOS, Windows: their prompts are the OS's own)."""
    import keyring

    if type(keyring.get_keyring()).__module__ != "keyring.backends.SecretService":
        return None
    import secretstorage
    from secretstorage.collection import DEFAULT_COLLECTION
    from secretstorage.exceptions import ItemNotFoundException

    try:
        bus = secretstorage.dbus_init()
    except Exception:  # no session bus at all
        return "absent"
    with contextlib.closing(bus):
        try:
            if not secretstorage.check_service_availability(bus):
                return "absent"
            collection = secretstorage.Collection(bus, DEFAULT_COLLECTION)  # reads a property: no prompt
            return "locked" if collection.is_locked() else None
        except ItemNotFoundException:
            return "new"
        except Exception:
            return None  # let the read below find out


def _usable_backend_problem() -> str | None:
    """Why the configured keyring backend must not be used, or None."""
    try:
        import keyring
        from keyring.backends import fail, null
    except Exception as exc:  # pragma: no cover - keyring is a dependency
        return f"the keyring module cannot load ({exc.__class__.__name__})"
    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring | null.Keyring):
        return _STATE_TEXT["absent"]
    module = type(backend).__module__
    if module.startswith("keyrings.alt"):
        return f"the configured keyring {type(backend).__name__} stores secrets in a plain file"
    try:
        priority = float(backend.priority)
    except Exception:
        priority = 0.0
    if priority <= 0 and module == "keyring.backends.SecretService":  # chosen earlier, gone from the bus now
        return _STATE_TEXT["absent"]
    if priority <= 0:
        return f"the keyring backend {type(backend).__name__} is not usable here"
    return None


OnState = Callable[[str | None], None]  # hears the Secret Service's state before the probe's read


def _probe(store: KeyringSecretStore, wait: float, on_state: OnState | None) -> str | None:
    """Read once in a daemon thread: an unlock prompt may never be answered (secretstorage#33).

    `on_state` hears the Secret Service's state first (from that thread), so a caller can say "locked — waiting
    for the unlock prompt" while the prompt is open."""
    outcome: list[str | None] = []
    seen: list[ServiceState | None] = []

    def read() -> None:
        state = secret_service_state()
        seen.append(state)
        if on_state is not None:
            on_state(state)
        if state == "absent":
            outcome.append(_STATE_TEXT["absent"])
            return
        try:
            store.get("__probe__")
            outcome.append(None)
        except SecretStoreUnavailable as exc:
            outcome.append(f"{_STATE_TEXT[state]} (its password prompt was dismissed)" if state else str(exc))

    worker = threading.Thread(target=read, name="keyring-probe", daemon=True)
    worker.start()
    worker.join(wait)
    if outcome:
        return outcome[0]
    state = seen[0] if seen else None
    if state in ("locked", "new"):
        return f"{_STATE_TEXT[state]} (its password prompt was not answered within {wait:g} s)"
    return f"the system keyring did not answer within {wait:g} s (an unlock prompt left open?)"


def open_secret_store(
    probe: bool = True, probe_wait: float = 60.0, on_state: OnState | None = None, ask: bool = True
) -> OpenedStore:
    """The keyring if it works (a read proves it answers), else session-only with a notice. Blocks up to
    `probe_wait` s while the system shows an unlock prompt: call it off the UI thread. Not `ask` (a look again
    in the background): a locked or new keyring is not opened (no prompt), and the notice is not a warning."""
    problem = _usable_backend_problem()
    if problem is None and not ask and (state := secret_service_state()) is not None:
        problem = _STATE_TEXT[state]
    if problem is None:
        store = KeyringSecretStore()
        if not probe:
            return OpenedStore(store, None)
        problem = _probe(store, probe_wait, on_state)
        if problem is None:
            return OpenedStore(store, None)
    notice = (
        f"Sign-in will last only while the app runs: {problem}. "
        "Unlock or install a system keyring (e.g. GNOME Keyring, KWallet) to stay signed in."
    )
    log.log(logging.WARNING if ask else logging.DEBUG, "%s", notice)
    return OpenedStore(MemorySecretStore(), notice, problem)


class PendingSecretStore:
    """The app's store while the keyring is still being opened (off the UI thread): calls wait for `resolve()`.

    Callers use it from worker threads (`asyncio.to_thread`), so the wait never holds the UI; `wait` bounds it
    in case nobody resolves (the app resolves with a session-only store when it quits first)."""

    def __init__(self, wait: float) -> None:
        self._ready = threading.Event()
        self._store: SecretStore = MemorySecretStore("checking the system keyring")
        self._wait = wait

    @property
    def persistent(self) -> bool:
        return self._store.persistent

    @property
    def description(self) -> str:
        return self._store.description

    @property
    def resolved(self) -> bool:
        return self._ready.is_set()

    def resolve(self, store: SecretStore) -> None:
        if not self._ready.is_set():
            self._store = store
            self._ready.set()

    def _target(self) -> SecretStore:
        self._ready.wait(self._wait)
        return self._store

    def get(self, tenant: str) -> str | None:
        return self._target().get(tenant)

    def set(self, tenant: str, secret: str) -> None:
        self._target().set(tenant, secret)

    def delete(self, tenant: str) -> None:
        self._target().delete(tenant)
