"""A team's shared archive (docs/archive.md "Team archive"): where it is, and its catalog's password.

The password lives in the keyring, in a slot named after the catalog (the same server, database and user share
it, whichever data dir asks). It reaches the store (store/archive_lake.py) in this process's memory only: given
with the options that name the lake (`team_lake`), or looked up when a reader of a database recorded to be read
with a lake first attaches it (`use_keyring_passwords`: `export`, `timeline` and the window read so).
"""

from __future__ import annotations

import contextlib
import logging
from typing import Final

from tenant_events.auth.secret_store import SecretStore, SecretStoreUnavailable, digest
from tenant_events.store.archive_lake import password_source, use_password
from tenant_events.values.team_archive import Lake

log = logging.getLogger(__name__)

_SLOT: Final = "team-archive:"


def password_slot(catalog: str) -> str:
    """The keyring slot of a catalog's password."""
    return f"{_SLOT}{digest(_SLOT, catalog)}"


def keep_password(secrets: SecretStore, catalog: str, password: str) -> None:
    """Keep the catalog's password in the keyring (an empty one forgets it)."""
    if password:
        secrets.set(password_slot(catalog), password)
    else:
        secrets.delete(password_slot(catalog))


def team_lake(catalog: str, data_path: str, secrets: SecretStore | None, password: str = "") -> Lake:
    """The lake of a checked catalog and folder, its password handed to the store for this process: `password`
    when given (then kept in the keyring for the next start, where it can be), else the keyring's. Without one,
    libpq's own ways apply (a trusted or peer connection, its service file)."""
    if password and secrets is not None:
        try:
            keep_password(secrets, catalog, password)
        except Exception as exc:  # a keyring that cannot write: this process has it all the same
            log.warning("the team archive's password is not kept in the keyring: %s", type(exc).__name__)
    elif secrets is not None:
        with contextlib.suppress(SecretStoreUnavailable):
            password = secrets.get(password_slot(catalog)) or ""
    use_password(catalog, password or None)
    return Lake(catalog, data_path)


def use_keyring_passwords() -> None:
    """Let the store look a catalog's password up in the keyring when it first attaches a lake it was given no
    password for (the keyring is opened then, not before)."""

    def look_up(catalog: str) -> str | None:
        from tenant_events.auth.secret_store import open_secret_store

        with contextlib.suppress(SecretStoreUnavailable):
            return open_secret_store(probe_wait=10.0).store.get(password_slot(catalog))
        return None

    password_source(look_up)
