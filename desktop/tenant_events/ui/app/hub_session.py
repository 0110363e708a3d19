"""One tenant read from a team hub: the tenant session's Qt adapter over a link whose source is the hub.

A hub tenant has no browser sign-in: "signing in" reads the hub secret from the keyring (hub/credentials.py)
and starts the link's hub viewer, "signing out" stops reading. Everything the window and tray see —
`status_changed`, `events_committed`, the readers, the alert rules — is the tenant session's
(ui/tenant_session.py), so nothing downstream can tell the two apart. The keyring is read when the session
starts (it may still wait on an unlock prompt when the session is made), and the NATS client is imported only
once a hub tenant exists.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from tenant_events.alert_settings import AlertSettings
from tenant_events.cancelling import finish_cancelled
from tenant_events.errors import SignInRequired
from tenant_events.paths import AppPaths
from tenant_events.settings.hubs import HubProfile
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sign_in import LoopbackListener, Opener, SecretStore
from tenant_events.tenant.sources import HubFrom, of_hub_profile
from tenant_events.ui.tenant_session import TenantSession
from tenant_events.values.retention import Retention
from tenant_events.values.stream_states import StreamState
from tenant_events.view.tenant_status import TenantStatus, TrayState

if TYPE_CHECKING:
    from tenant_events.tenant.team_feed import TeamAlertView, TeamAlertWatch
    from tenant_events.tenant.team_silences import TeamSilencesMirror
    from tenant_events.tenant.team_triage import TeamTriageMirror

log = logging.getLogger(__name__)


class HubSession(TenantSession):
    """A `TenantSession` following `hub_profile`'s tenant through the hub."""

    team_triage_changed = Signal()  # a teammate's triage reached the local database

    def __init__(
        self,
        hub_profile: HubProfile,
        paths: AppPaths,
        secrets: SecretStore,
        *,
        retention: Retention | None = None,
        alerts: AlertSettings | None = None,
        parent: QObject | None = None,
    ) -> None:
        from tenant_events.hub.connection import HubOptions  # loads the NATS client

        # Where the hub is, without its secret yet: restore() reads that from the keyring before the link starts.
        unsigned = HubFrom(
            HubOptions(tuple(hub_profile.hub_urls), ca_file=hub_profile.ca_file),
            hub_profile.hub_tenant,
            tuple(hub_profile.event_types),
        )
        link = TenantLink(
            hub_profile.name, paths, unsigned, retention=retention, alerts=alerts, strict_rules=False
        )
        super().__init__(link, parent)
        self.hub_profile = hub_profile
        self._secrets = secrets
        self.team_triage: TeamTriageMirror | None = None
        self.team_silences: TeamSilencesMirror | None = None  # the team's silences, kept in the silences file
        self.team_alerts: TeamAlertView | None = None  # the relay's alerts, when it evaluates for the team
        self._team_watch: TeamAlertWatch | None = None  # until a relay evaluates for the team
        self._triage_task: asyncio.Future[None] | None = None
        self._probe: asyncio.Future[TeamAlertView | None] | None = None  # asking the hub, while starting
        self.status = TenantStatus(self.name, reason="not connected to the hub yet")

    @property
    def is_signed_in(self) -> bool:
        return self.link.running and self.link.state.state is not StreamState.SIGNED_OUT

    async def _restore(self) -> bool:
        """Start reading from the hub with the stored secret; False when there is none (or no keyring)."""
        if self.link.running:
            return True
        try:
            self.link.source = await asyncio.to_thread(
                of_hub_profile, self.hub_profile, self._secrets, self.link.paths.data_dir
            )
        except SignInRequired as exc:
            log.info("%s: %s", self.name, exc.message)
            self._set_status(TrayState.SIGNED_OUT, f"not connected to the hub: {exc.message}")
            self.sign_in_failed.emit(self.name, str(exc))
            return False
        probe = self._probe = asyncio.ensure_future(self._team_alert_view())
        try:
            view = await probe
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self._closed or (task is not None and task.cancelling()):
                raise
            return False  # close() cut the question short: start nothing
        finally:
            self._probe = None
        if self._closed:  # removed or quitting while the hub was asked: start nothing
            if view is not None:
                await view.stop()
            return False
        started = await super()._restore()
        if view is not None:
            if started:
                await view.start()
                self.team_alerts = view
            else:
                await view.stop()
        elif started and self._team_watch is None and self.link.rules is not None:
            from tenant_events.tenant.team_feed import TeamAlertWatch  # loads the NATS client

            self._team_watch = TeamAlertWatch(self.link, self._team_switched)
            self._team_watch.start()
        if started and self.team_triage is None:
            self._triage_task = asyncio.ensure_future(self._start_team_triage())
        return started

    async def _team_alert_view(self) -> TeamAlertView | None:
        """The team's alerts instead of this computer's own evaluation, when the hub's relay evaluates for the
        team (tenant/team_feed.py); checked before the link starts, so its rules are not attached meanwhile."""
        if self.team_alerts is not None:
            return None
        from tenant_events.tenant.team_feed import open_team_view  # loads the NATS client

        return await open_team_view(self.link)

    def _team_switched(self, view: TeamAlertView) -> None:
        """A relay started evaluating for the team after this session started: its alerts are shown now."""
        self.team_alerts = view

    async def _stop_team_alerts(self) -> None:
        watch, self._team_watch = self._team_watch, None
        if watch is not None:
            await watch.stop()  # and the view it started
        view, self.team_alerts = self.team_alerts, None
        if view is not None:
            await view.stop()
            self.link.team_alerts = False  # asked again at the next start

    async def _start_team_triage(self) -> None:
        """The team's shared triage of this tenant (tenant/team_triage.py); without it the inbox's triage stays
        this computer's own (an older hub without the bucket, or a user without the right to it)."""
        from tenant_events.tenant.team_triage import describe, start_mirror  # loads the NATS client

        source = self.link.source
        if not isinstance(source, HubFrom):
            return
        try:
            mirror = await start_mirror(self.link.database_file, source.options, source.hub_tenant)
        except Exception as exc:  # the hub's triage is optional: say why, keep following the tenant
            log.warning("%s: the team's triage on the hub is not available: %s", self.name, describe(exc))
            return
        mirror.on_applied.append(self.team_triage_changed.emit)
        mirror.on_heard.append(
            self.team_triage_changed.emit
        )  # a command's triage: stored here by the command
        self.link.on_alerts.append(mirror.retry)
        self.team_triage = mirror
        mirror.retry()
        from tenant_events.settings.silences_file import SilenceBook
        from tenant_events.tenant.team_silences import start_silences_mirror

        try:  # the team's silences: honoured here, and this computer's shared with the team
            self.team_silences = await start_silences_mirror(
                SilenceBook.of(self.link.paths), source.options, source.hub_tenant, profile=self.name
            )
        except Exception as exc:
            log.warning("%s: the team's silences on the hub are not available: %s", self.name, describe(exc))

    async def _stop_team_triage(self) -> None:
        task, self._triage_task = self._triage_task, None
        if task is not None and not task.done():
            task.cancel()  # still connecting: start_mirror leaves nothing open when cancelled
            await finish_cancelled(task)
        silences, self.team_silences = self.team_silences, None
        if silences is not None:
            await silences.stop()
        mirror, self.team_triage = self.team_triage, None
        if mirror is not None:
            if mirror.retry in self.link.on_alerts:
                self.link.on_alerts.remove(mirror.retry)
            await mirror.stop()

    def _interrupt(self) -> None:
        if self._probe is not None:
            self._probe.cancel()  # the hub's answer is not waited for (up to its connect timeouts)

    async def _close(self) -> None:
        """The team's alerts and triage go before the link: they read its database."""
        await self._stop_team_alerts()
        await self._stop_team_triage()
        await super()._close()

    async def sign_in(
        self, opener: Opener, on_listener: Callable[[LoopbackListener], None] | None = None
    ) -> bool:
        """No browser for a hub: start again with the keyring's secret."""
        return await self.restore()

    async def sign_out(self) -> None:
        await self._stop_team_alerts()
        await self._stop_team_triage()
        await self.link.stop()
        self._set_status(TrayState.SIGNED_OUT, "disconnected from the hub")
