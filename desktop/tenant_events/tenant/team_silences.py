"""A hub tenant's shared silences, mirrored into the installation's silences file so that this machine's
notifications and deliveries honour them (settings/silences_file.py: the app, `stream` and the relay read it).

    hub bucket TENANT_EVENTS_<T>_SILENCES ──watch──▶ silences.json: id "hub-<id>", by "<hub user> (team)",
                                                     tenant: this machine's profile of the hub tenant
    a silence made here for the hub tenant ──publish──▶ the bucket (under this user's own key)

The mirror has a hub connection of its own, opened with the tenant's hub options.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

from tenant_events.errors import UserFixableError
from tenant_events.hub.connection import HubOptions, close_connection, connect
from tenant_events.hub.silences import SilenceBoard
from tenant_events.hub.subjects import HubNames
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.values.silences import Silence

log = logging.getLogger(__name__)
HUB_PREFIX = "hub-"


class TeamSilencesMirror:
    """The team's silences of one hub tenant, kept in this machine's silences file."""

    def __init__(self, book: SilenceBook, options: HubOptions, hub_tenant: str, profile: str) -> None:
        self.book = book
        self.options = options
        self.names = HubNames(hub_tenant)
        self.profile = profile
        self.board: SilenceBoard | None = None
        self._nc: Any = None

    async def start(self) -> None:
        self._nc = await connect(self.options, reconnect=True)
        self.board = await SilenceBoard.open(self._nc.jetstream(timeout=5.0), self.names, self.options.auth)
        self.board.on_change.append(self._arrived)
        await self.board.start()

    def _arrived(self, silence: Silence) -> None:
        local = dataclasses.replace(
            silence, id=HUB_PREFIX + silence.id, author=f"{silence.author} (team)", tenant=self.profile
        )
        try:
            self.book.add(local)
        except (UserFixableError, OSError) as exc:
            log.warning("the team's silence %s could not be kept here: %s", silence.id, exc)

    async def publish(self, silence: Silence) -> None:
        """Share a silence made here with the team (its matchers as they are, its id without the mirror's
        prefix)."""
        if self.board is None:
            raise UserFixableError("not connected to the hub's silences yet")
        await self.board.put(
            dataclasses.replace(silence, id=silence.id.removeprefix(HUB_PREFIX), tenant=None)
        )

    async def stop(self) -> None:
        if self.board is not None:
            await self.board.stop()
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await close_connection(self._nc)


async def start_silences_mirror(
    book: SilenceBook, options: HubOptions, hub_tenant: str, *, profile: str
) -> TeamSilencesMirror:
    """Connected and following the bucket, or raises with nothing left open."""
    mirror = TeamSilencesMirror(book, options, hub_tenant, profile)
    try:
        await asyncio.wait_for(mirror.start(), 15)
    except BaseException:
        with contextlib.suppress(Exception):
            await asyncio.shield(mirror.stop())
        raise
    return mirror
