"""A hub tenant's shared triage, mirrored into its database so the inbox and the badge show the team's state.

    hub bucket TENANT_EVENTS_<T>_TRIAGE ──watch──▶ local alert_triage (by = the teammate's hub user)
    this user's change in the inbox ──publish──▶ the bucket (under this user's own key)

The local database keeps the history as it arrives; an entry for an alert this viewer has not evaluated yet
(it is still catching up) is applied when its rules raise that alert. The mirror has a hub connection of its
own, opened with the tenant's hub options (secret from the keyring, as the viewer's).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tenant_events.errors import StorageError
from tenant_events.hub.connection import HubOptions, close_connection, connect, describe
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.triage import TeamTriage, TriageBoard, alert_key
from tenant_events.store.alert_triage import AlertTriage

log = logging.getLogger(__name__)


class TeamTriageMirror:
    """The team's triage of one hub tenant, kept in step with its local database."""

    def __init__(self, database: Path, options: HubOptions, hub_tenant: str) -> None:
        self.database = database
        self.options = options
        self.names = HubNames(hub_tenant)
        self.board: TriageBoard | None = None
        self._nc: Any = None
        self.pending: dict[
            str, TeamTriage
        ] = {}  # alert → newest entry not applied yet (alert not raised here)
        self.applied = 0
        self.on_applied: list[Callable[[], None]] = []  # a teammate's change reached the local database
        # any change heard from the hub, one stored here already too (this user's from a command, its own echo)
        self.on_heard: list[Callable[[], None]] = []

    async def start(self) -> None:
        self._nc = await connect(self.options, reconnect=True)
        self.board = await TriageBoard.open(self._nc.jetstream(timeout=5.0), self.names, self.options.auth)
        self.board.on_change.append(self._arrived)
        await self.board.start()

    async def stop(self) -> None:
        if self.board is not None:
            await self.board.stop()
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await close_connection(self._nc)

    def _arrived(self, entry: TeamTriage) -> None:
        self.pending[entry.alert] = entry
        self.retry()
        for callback in list(self.on_heard):
            callback()

    def retry(self, *_: object) -> None:
        """Apply what is pending (call when alerts were raised: an entry may now have its alert)."""
        if not self.pending or not self.database.exists():
            return
        try:
            with AlertTriage(self.database) as triage:
                for alert, entry in list(self.pending.items()):
                    rule_id, first_event = alert.split(".", 1)
                    alert_id = triage.find_alert(rule_id, first_event)
                    if alert_id is None:
                        continue
                    del self.pending[alert]
                    if not triage.has_entry(alert_id, entry.by, entry.at):
                        triage.set(
                            alert_id,
                            entry.state,  # type: ignore[arg-type]
                            entry.by,
                            entry.note,
                            entry.until,
                            entry.at,
                            mirrored=True,
                        )
                        self.applied += 1
                        for callback in list(self.on_applied):
                            callback()
        except (StorageError, FileNotFoundError, ValueError) as exc:
            log.warning("the team's triage could not be stored here: %s", exc)

    async def publish(
        self, alert_id: int, state: str, note: str = "", until: float | None = None, at: float | None = None
    ) -> None:
        """Write this user's triage of a local alert to the hub; `at` as stored locally, so the hub's copy
        coming back is recognised as the same change."""
        if self.board is None:
            raise StorageError("not connected to the hub's triage yet")
        with AlertTriage(self.database) as triage:
            names = triage.alert_names(alert_id)
        if names is None:
            raise ValueError(f"no alert {alert_id}")
        await self.board.put(alert_key(*names), state, note, until, at)


__all__ = ["TeamTriageMirror", "describe", "start_mirror"]


async def start_mirror(database: Path, options: HubOptions, hub_tenant: str) -> TeamTriageMirror:
    """Connected and following the bucket, or raises with nothing left open (a connection made before the
    board failed, timed out or was cancelled is closed)."""
    mirror = TeamTriageMirror(database, options, hub_tenant)
    try:
        await asyncio.wait_for(mirror.start(), 15)
    except BaseException:
        with contextlib.suppress(Exception):  # what went wrong first is what the caller hears
            await asyncio.shield(mirror.stop())
        raise
    return mirror
