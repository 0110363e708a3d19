"""Adding and lifting a silence: the one path of the command line (`tenant-events silences add|remove`), the
inbox's "Quiet this" menu and Settings ▸ Silences.

    add(silence)  ─ its tenant is followed through a team hub ─▶ the hub's silences bucket, under this hub user's
                  │                                              own key ─▶ silences.json as "hub-<id>", the
                  │                                              team's copy the mirror keeps too
                  └ any other ──────────────────────────────────▶ silences.json
    lift(id)      ─ a team's silence ("hub-…") ─▶ the bucket: its end now, under this user's key ─▶ silences.json
                  └ any other ────────────────────────────────▶ silences.json

A team tenant's silence is the team's: every viewer and the relay honour it, and the hub says who may make one.
A hub user the hub does not let write the team's silences (a read-only teammate) is refused by the server, and
then nothing changes here either — one computer quiet while the relay pages the team would be a silence in
name only. The app shares through the hub session's running mirror (tenant/team_silences.py); the command
line connects for the moment with the hub profile's saved secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from tenant_events.auth.secret_store import SecretStore
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.values.silences import Silence

if TYPE_CHECKING:  # (the NATS client loads only for a hub tenant)
    from tenant_events.tenant.team_silences import TeamSilencesMirror


def _keyring() -> SecretStore:
    from tenant_events.auth.secret_store import open_secret_store

    return open_secret_store().store


class Silences:
    """The installation's silences as every front end changes them."""

    def __init__(
        self,
        paths: AppPaths,
        book: SilenceBook | None = None,
        *,
        running: Callable[[str], TeamSilencesMirror | None] = lambda _profile: None,
        secrets: Callable[[], SecretStore] = _keyring,
    ) -> None:
        """`running(profile)`: the hub session's mirror of that tenant's silences while it runs (the app);
        `secrets()`: where a hub profile's secret is kept (called off the loop thread)."""
        self.paths = paths
        self.book = book or SilenceBook.of(paths)
        self._running = running
        self.secrets = secrets

    async def add(self, silence: Silence) -> Silence:
        """Keep `silence`, shared first with the team of its tenant when that is a hub tenant; returns it as
        kept. UserFixableError (nothing kept) when the hub refuses or cannot be reached."""
        async with self._team(silence.tenant) as team:
            kept = await team.share(silence) if team is not None else silence
        return await asyncio.to_thread(self.book.add, kept)

    async def lift(self, silence_id: str) -> Silence:
        """End a silence now — for the whole team when it is the team's; ConfigError when there is none."""
        from tenant_events.tenant.team_silences import HUB_PREFIX

        found = next((s for s in await asyncio.to_thread(self.book.all) if s.id == silence_id), None)
        now = time.time()
        if found is not None and found.id.startswith(HUB_PREFIX) and found.active(now):
            async with self._team(found.tenant) as team:
                if team is not None:
                    await team.share(dataclasses.replace(found, ends_at=now))
        return await asyncio.to_thread(self.book.remove, silence_id)

    @contextlib.asynccontextmanager
    async def _team(self, profile: str | None) -> AsyncIterator[TeamSilencesMirror | None]:
        """The team's silences of `profile` when it is a hub tenant: the running mirror, or one connected for
        the moment (closed afterwards); None for any other tenant."""
        running = self._running(profile) if profile is not None else None
        if profile is None or running is not None:
            yield running
            return
        hub = (await asyncio.to_thread(load_settings, self.paths)).hub(profile)
        if hub is None:
            yield None
            return
        from tenant_events.tenant.sources import of_hub_profile
        from tenant_events.tenant.team_silences import start_silences_mirror

        # the keyring may block (an unlock prompt): never on the loop thread
        source = await asyncio.to_thread(lambda: of_hub_profile(hub, self.secrets(), self.paths.data_dir))
        try:
            mirror = await start_silences_mirror(
                self.book, source.options, source.hub_tenant, profile=profile, watch=False
            )
        except UserFixableError:
            raise
        except Exception as exc:  # an older hub without the bucket, a user who may not read it, no answer
            from tenant_events.hub.connection import HubUnavailable, describe

            raise HubUnavailable(
                f"the team's silences of {profile} on the hub cannot be reached ({describe(exc)})",
                "check the hub and its permissions (docs/hub-permissions.md)",
            ) from None
        try:
            yield mirror
        finally:
            await mirror.stop()
