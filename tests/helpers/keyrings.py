"""The keyring a window test keeps its secrets in."""

from __future__ import annotations

import os

from tenant_events.auth.secret_store import MemorySecretStore, SecretStore, open_secret_store


def session_secret_store() -> SecretStore:
    """The system keyring under ./run test (gnome-keyring on D-Bus); elsewhere a session-only one."""
    if os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1":
        return open_secret_store().store
    return MemorySecretStore()
