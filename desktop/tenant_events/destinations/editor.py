"""What Settings ▸ Alert destinations does, Qt-free: list, save, remove, send a test alert, and why one is stopped.

The page (ui/alerts/destinations_page.py) calls these from worker threads: each touches the keyring or the
network. Errors are ConfigError / UserFixableError with one line the page shows under the field at fault.
"""

from __future__ import annotations

from typing import Any

from tenant_events.auth.secret_store import SecretStore
from tenant_events.destinations.message import test_message
from tenant_events.destinations.registry import (
    destination_url,
    make_destination,
    remove_destination,
    save_destination,
)
from tenant_events.destinations.send import Outcome, send
from tenant_events.destinations.urls import instantiate
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.store.outbox import read_status


class DestinationEditor:
    """The destinations of one installation (settings file + keyring)."""

    def __init__(self, paths: AppPaths, store: SecretStore) -> None:
        self.paths = paths
        self.store = store

    def destinations(self) -> list[DestinationProfile]:
        return list(load_settings(self.paths).destinations)

    def save(self, name: str, url: str, **fields: Any) -> DestinationProfile:
        """Add or change `name`; an empty `url` keeps the stored one (only what it receives changes)."""
        if url.strip():
            profile = make_destination(name, url.strip(), **fields)
            return save_destination(self.paths, self.store, profile, url.strip())
        old = next((d for d in self.destinations() if d.name == name), None)
        if old is None:
            from tenant_events.errors import ConfigError

            raise ConfigError("destination url", "is empty", "paste the Apprise URL of the service")
        kept = old.model_dump(exclude={"name", "url_masked", "fingerprint"})  # what the caller did not set
        profile = make_destination(name, destination_url(self.store, self.paths, old), **(kept | fields))
        return save_destination(self.paths, self.store, profile, None)

    def remove(self, name: str) -> None:
        remove_destination(self.paths, self.store, name)

    def test(self, name: str, url: str = "") -> Outcome:
        """Send a test alert to `url` (what was typed) or, when empty, to `name`'s stored URL (blocking)."""
        if url.strip():
            instantiate(url.strip())
            target = url.strip()
        else:
            profile = next((d for d in self.destinations() if d.name == name), None)
            if profile is None:
                from tenant_events.errors import ConfigError

                raise ConfigError("destination url", "is empty", "paste the Apprise URL to test")
            target = destination_url(self.store, self.paths, profile)
        return send(target, test_message(name or "new destination"))

    def stops(self) -> dict[str, str]:
        """{destination: why it is stopped} over every tenant database (for its current URL only)."""
        current = {d.name: d.fingerprint for d in self.destinations()}
        out: dict[str, str] = {}
        folder = self.paths.databases_dir
        for db in sorted(folder.glob("*.sqlite3")) if folder.exists() else []:
            for s in read_status(db):
                if s.stopped_reason and current.get(s.name) == s.fingerprint:
                    out.setdefault(s.name, s.stopped_reason)
        return out
