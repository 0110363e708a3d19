"""The stored sign-in of a profile in a data dir, read from (or removed from) the session's keyring as the app
keeps it: in the slot bound to the profile's tenant, client and data dir (auth/stored_sign_in.py)."""

from __future__ import annotations

import os

from tenant_events.auth.secret_store import SecretStore, open_secret_store
from tenant_events.auth.stored_sign_in import slot_for
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings


def slot_key(data_dir: str | os.PathLike[str], name: str) -> str:
    paths = AppPaths.resolve(data_dir)
    return slot_for(load_settings(paths).tenant(name), paths.data_dir).key


def stored_token(data_dir: str | os.PathLike[str], name: str, store: SecretStore | None = None) -> str | None:
    return (store or open_secret_store().store).get(slot_key(data_dir, name))


def forget_token(data_dir: str | os.PathLike[str], name: str) -> None:
    open_secret_store().store.delete(slot_key(data_dir, name))
