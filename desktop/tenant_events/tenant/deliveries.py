"""A tenant link's alert deliveries, and the destinations' status across the tenant databases.

    link.on_alerts ──kick──▶ DeliveryWorker (destinations/worker.py) over the link's database outbox

`attach_deliveries` starts the worker once the link has started (its database exists); `stop()` ends it. The
destinations and their URLs are re-read when the settings file changes (the keyring only then), so a URL fixed
in another process lifts a stop without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tenant_events.alerts.delivery import QuietTimes
from tenant_events.auth.secret_store import SecretStore, open_secret_store
from tenant_events.destinations.registry import destination_url
from tenant_events.destinations.worker import DeliveryWorker, Target
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.store.outbox import DestinationStatus, read_status, read_undelivered
from tenant_events.tenant.link import TenantLink
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.silences import silencing

log = logging.getLogger(__name__)
REREAD_S = 5.0  # while a destination's URL cannot be read, it is read again this often

__all__ = [
    "Deliveries",
    "DestinationTargets",
    "attach_deliveries",
    "destination_status",
    "keyring_opener",
    "silence_check",
    "undelivered",
    "undelivered_in",
]


class DestinationTargets:
    """The destinations with their whole URLs, re-read when the settings file changes — and, while a URL cannot
    be read (the keyring did not answer, or was not there when opened), every REREAD_S seconds: that destination
    is kept with its problem (its deliveries wait, destinations/worker.py), never dropped, so a keyring that
    fails for a moment holds the alerts back instead of routing them to no destination."""

    def __init__(self, paths: AppPaths, store: Callable[[], SecretStore]) -> None:
        """`store` is called only when there is a destination (opening the keyring may prompt)."""
        self._paths = paths
        self._store = store
        self._opened: SecretStore | None = None
        self._stamp: int | None = -1
        self._reread_at: float | None = None  # while a URL cannot be read: when to try again
        self._targets: dict[str, Target] = {}
        self._quiet: QuietTimes | None = None
        self.problems: dict[str, str] = {}  # destination → why its URL cannot be read now

    def _stamp_now(self) -> int | None:
        try:
            return self._paths.settings_file.stat().st_mtime_ns
        except OSError:
            return None

    def __call__(self) -> dict[str, Target]:
        stamp = self._stamp_now()
        again = self._reread_at is not None and time.monotonic() >= self._reread_at
        if stamp != self._stamp or again:
            settings = load_settings(self._paths)
            targets, problems = {}, {}
            for profile in settings.destinations:
                if self._opened is None:
                    self._opened = self._store()
                try:
                    url = destination_url(self._opened, self._paths, profile)
                except UserFixableError as exc:
                    problems[profile.name] = self._problem(exc)
                    targets[profile.name] = Target(profile, "", profile.fingerprint, problems[profile.name])
                    continue
                targets[profile.name] = Target(profile, url, profile.fingerprint)
            for name, problem in problems.items():
                if self.problems.get(name) != problem:
                    log.warning("alert destination %s cannot be used now: %s", name, problem)
            if problems and self._opened is not None and not self._opened.persistent:
                self._opened = None  # a session-only store (no keyring when opened): open the keyring again
            self._targets, self.problems = targets, problems
            self._quiet = QuietTimes(settings.notifications)
            self._stamp = stamp
            self._reread_at = time.monotonic() + REREAD_S if problems else None
        return self._targets

    def _problem(self, exc: UserFixableError) -> str:
        """Why a URL cannot be read, with what to do; a session-only store says that the keyring was missing."""
        opened = self._opened
        if opened is not None and not opened.persistent:
            return "its URL cannot be read: no system keyring answered — unlock or start the system keyring"
        return str(exc)

    def quiet(self) -> QuietTimes | None:
        return self._quiet


def keyring_opener() -> Callable[[], SecretStore]:
    """The system keyring for a command's deliveries (DestinationTargets opens it when a destination needs it):
    the first call may show the unlock prompt and logs why sign-ins last the session only; later ones (the
    keyring was not there, a destination waits for its URL) look again without a prompt or a word, as they do
    every REREAD_S seconds."""
    asked = False

    def opened() -> SecretStore:
        nonlocal asked
        first, asked = not asked, True
        return open_secret_store(ask=first).store

    return opened


@dataclass
class Deliveries:
    worker: DeliveryWorker
    task: asyncio.Task[None]

    async def stop(self) -> None:
        await self.worker.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


def attach_deliveries(
    link: TenantLink, paths: AppPaths, store: Callable[[], SecretStore], **options: Any
) -> Deliveries:
    """Deliver `link`'s alerts (call after `link.start()`); `options` go to DeliveryWorker (tests: backoff…)."""
    targets = DestinationTargets(paths, store)
    options.setdefault("silenced", silence_check(paths, link.name))
    worker = DeliveryWorker(link.database_file, targets, targets.quiet, **options)
    link.on_alerts.append(worker.kick)
    task = asyncio.create_task(worker.run(), name=f"deliveries-{link.name}")
    return Deliveries(worker, task)


def silence_check(paths: AppPaths, profile: str) -> Callable[[StoredAlert], bool]:
    """Whether a silence in the installation's silences file holds an alert of `profile` now."""
    book = SilenceBook.of(paths)
    return lambda alert: silencing(book.all(), alert, profile, time.time()) is not None


def destination_status(paths: AppPaths) -> dict[str, list[tuple[str, DestinationStatus]]]:
    """{destination: [(tenant, its status in that tenant's database)]} over every stored tenant."""
    out: dict[str, list[tuple[str, DestinationStatus]]] = {}
    folder = paths.databases_dir
    for db in sorted(folder.glob("*.sqlite3")) if folder.exists() else []:
        for status in read_status(db):
            out.setdefault(status.name, []).append((db.stem, status))
    return out


def undelivered(paths: AppPaths, tenant: str) -> dict[int, list[str]]:
    """{alert id: destinations it never reached} in `tenant`'s database."""
    return undelivered_in(paths.database_file(tenant))


def undelivered_in(path: Path) -> dict[int, list[str]]:
    """{alert id: destinations it never reached} in the database at `path` (the inbox's "undelivered" mark)."""
    return read_undelivered(path) if path.exists() else {}
