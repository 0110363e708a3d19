"""A team's shared archive (docs/archive.md "Team archive"): where it is, its catalog's password and, for files
in object storage, the storage's access key id and secret.

The password lives in the keyring, in a slot named after the catalog (the same server, database and user share
it, whichever data dir asks); the storage's keys in a slot named after the storage's endpoint and the s3://
location. They reach the store (store/archive_lake.py, store/lake_storage.py) in this process's memory only:
given with the options that name the lake (`team_lake`), or looked up when a reader of a database recorded to be
read with a lake first attaches it (`use_keyring_passwords`: `export`, `timeline` and the window read so).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

from tenant_events.auth.secret_store import SecretStore, SecretStoreUnavailable, digest
from tenant_events.store.archive_lake import check_storage, password_source, use_password
from tenant_events.store.lake_storage import Keys, key_source, place, use_keys
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)

_SLOT: Final = "team-archive:"
_KEYS_SLOT: Final = "team-archive-storage:"


def password_slot(catalog: str) -> str:
    """The keyring slot of a catalog's password."""
    return f"{_SLOT}{digest(_SLOT, catalog)}"


def keep_password(secrets: SecretStore, catalog: str, password: str) -> None:
    """Keep the catalog's password in the keyring (an empty one forgets it)."""
    if password:
        secrets.set(password_slot(catalog), password)
    else:
        secrets.delete(password_slot(catalog))


def keys_slot(lake: Lake) -> str:
    """The keyring slot of the storage keys for the lake's place (endpoint and s3:// location)."""
    return f"{_KEYS_SLOT}{digest(_KEYS_SLOT, place(lake))}"


def keep_keys(secrets: SecretStore, lake: Lake, keys: Keys | None) -> None:
    """Keep the storage's access key id and secret in the keyring (None forgets them)."""
    if keys and all(keys):
        secrets.set(keys_slot(lake), "\n".join(keys))
    else:
        secrets.delete(keys_slot(lake))


def _kept_keys(secrets: SecretStore, lake: Lake) -> Keys | None:
    kept = secrets.get(keys_slot(lake)) or ""
    key_id, _, secret = kept.partition("\n")
    return (key_id, secret) if key_id and secret else None


def team_lake(where: Lake, secrets: SecretStore | None, password: str = "", keys: Keys | None = None) -> Lake:
    """The checked lake `where`, its catalog's password and storage keys handed to the store for this process:
    `password` and `keys` when given (then kept in the keyring for the next start, where it can be), else the
    keyring's. Without a password, libpq's own ways apply (a trusted or peer connection, its service file);
    without keys, the storage is asked anonymously."""
    if password and secrets is not None:
        try:
            keep_password(secrets, where.catalog, password)
        except Exception as exc:  # a keyring that cannot write: this process has it all the same
            log.warning("the team archive's password is not kept in the keyring: %s", type(exc).__name__)
    elif secrets is not None:
        with contextlib.suppress(SecretStoreUnavailable):
            password = secrets.get(password_slot(where.catalog)) or ""
    use_password(where.catalog, password or None)
    if where.in_object_storage:
        if keys and secrets is not None:
            try:
                keep_keys(secrets, where, keys)
            except Exception as exc:  # (as the password)
                log.warning(
                    "the team archive's storage keys are not kept in the keyring: %s", type(exc).__name__
                )
        elif secrets is not None:
            with contextlib.suppress(SecretStoreUnavailable):
                keys = _kept_keys(secrets, where)
        use_keys(where, keys)
    return where


def check_reachable(lake: Lake) -> None:
    """The lake's object storage answers its keys (nothing for a folder); UserFixableError saying what is wrong:
    access denied to the bucket, no such bucket, the endpoint out of reach."""
    check_storage(lake)


def use_keyring_passwords() -> None:
    """Let the store look a catalog's password up in the keyring when it first attaches a lake it was given no
    password for (the keyring is opened then, not before)."""

    def look_up(catalog: str) -> str | None:
        from tenant_events.auth.secret_store import open_secret_store

        with contextlib.suppress(SecretStoreUnavailable):
            return open_secret_store(probe_wait=10.0).store.get(password_slot(catalog))
        return None

    password_source(look_up)

    def look_up_keys(lake: Lake) -> Keys | None:
        from tenant_events.auth.secret_store import open_secret_store

        with contextlib.suppress(SecretStoreUnavailable):
            return _kept_keys(open_secret_store(probe_wait=10.0).store, lake)
        return None

    key_source(look_up_keys)
