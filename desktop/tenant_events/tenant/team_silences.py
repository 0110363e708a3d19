"""A hub tenant's shared silences, mirrored into the installation's silences file so that this machine's
notifications and deliveries honour them (settings/silences_file.py: the app, `stream` and the relay read it).

    hub bucket TENANT_EVENTS_<T>_SILENCES ──watch──▶ silences.json: id "hub-<id>", by "<hub user> (team)",
                                                     tenant: this machine's profile of the hub tenant
    a silence made here for the hub tenant ──share──▶ the bucket (under this user's own key), then the file

The mirror has a hub connection of its own, opened with the tenant's hub options. A silence made or lifted here
goes through tenant/silences.py, which shares it through the running mirror (the app) or one opened for the
moment (the command line).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

import nats.errors

from tenant_events.errors import UserFixableError
from tenant_events.hub.connection import (
    HubOptions,
    HubRefused,
    HubUnavailable,
    close_connection,
    connect,
    describe,
    is_refusal,
)
from tenant_events.hub.silences import SilenceBoard
from tenant_events.hub.subjects import HubNames
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.values.silences import Silence

log = logging.getLogger(__name__)
HUB_PREFIX = "hub-"


def team_copy(silence: Silence, user: str, profile: str) -> Silence:
    """A silence of the bucket as this machine keeps it: its id marked, its author the hub user, its tenant the
    profile that follows the hub tenant here."""
    return dataclasses.replace(
        silence,
        id=HUB_PREFIX + silence.id.removeprefix(HUB_PREFIX),
        author=f"{user} (team)",
        tenant=profile,
    )


class TeamSilencesMirror:
    """The team's silences of one hub tenant, kept in this machine's silences file."""

    def __init__(self, book: SilenceBook, options: HubOptions, hub_tenant: str, profile: str) -> None:
        self.book = book
        self.options = options
        self.names = HubNames(hub_tenant)
        self.profile = profile
        self.board: SilenceBoard | None = None
        self._nc: Any = None
        self._refusal: Exception | None = None  # the last "permissions violation" the server reported

    def _error(self, exc: Exception) -> None:
        if is_refusal(exc):
            self._refusal = exc

    async def start(self, *, watch: bool = True) -> None:
        """Connect and open the bucket; `watch`: follow it into the silences file, returning once the silences
        the bucket holds are in it (a relay taking over honours them from its first delivery); False: only to
        share."""
        self._nc = await connect(self.options, reconnect=watch, on_error=self._error)
        self.board = await SilenceBoard.open(self._nc.jetstream(timeout=5.0), self.names, self.options.auth)
        if watch:
            self.board.on_change.append(self._arrived)
            await self.board.start()
            await self.board.loaded.wait()

    def _arrived(self, silence: Silence) -> None:
        try:
            self.book.add(team_copy(silence, silence.author, self.profile))
        except (UserFixableError, OSError) as exc:
            log.warning("the team's silence %s could not be kept here: %s", silence.id, exc)

    async def share(self, silence: Silence) -> Silence:
        """Write a silence made (or lifted) here to the bucket under this user's key: its matchers as they are,
        its id without the mirror's prefix. Returns it as the mirror keeps it; HubRefused when the hub does not
        let this user write silences (a read-only teammate), HubUnavailable when it did not take it."""
        board = self.board
        if board is None:
            raise HubUnavailable("not connected to the hub's silences yet", "try again in a moment")
        self._refusal = None
        try:
            await board.put(dataclasses.replace(silence, id=silence.id.removeprefix(HUB_PREFIX), tenant=None))
        except ValueError as exc:  # the hub answered no (e.g. its bucket is full)
            raise HubUnavailable(f"the hub did not take the silence: {exc}", "see the hub's log") from None
        except (TimeoutError, nats.errors.Error) as exc:
            # A refused publish never gets an answer: the server's "permissions violation" arrives on the side
            # (`_error`) and the request times out.
            refusal = self._refusal
            if refusal is not None:
                raise HubRefused(
                    f"the hub does not let {board.user} silence {self.names.tenant}'s alerts "
                    f"({describe(refusal)})",
                    "a teammate who may, or the hub's administrator, can (docs/hub-permissions.md)",
                ) from None
            raise HubUnavailable(
                f"the hub did not take the silence ({describe(exc)})", "check that the hub runs"
            ) from None
        return team_copy(silence, board.user, self.profile)

    async def stop(self) -> None:
        if self.board is not None:
            await self.board.stop()
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await close_connection(self._nc)


async def start_silences_mirror(
    book: SilenceBook, options: HubOptions, hub_tenant: str, *, profile: str, watch: bool = True
) -> TeamSilencesMirror:
    """Connected (and following the bucket, with `watch`), or raises with nothing left open."""
    mirror = TeamSilencesMirror(book, options, hub_tenant, profile)
    try:
        await asyncio.wait_for(mirror.start(watch=watch), 15)
    except BaseException:
        with contextlib.suppress(Exception):
            await asyncio.shield(mirror.stop())
        raise
    return mirror
