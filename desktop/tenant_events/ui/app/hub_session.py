"""One tenant read from a team hub: the same Qt adapter as a tenant's session, with a hub viewer as its source.

A hub tenant has no browser sign-in: "signing in" connects to the hub with the secret in the keyring
(hub/credentials.py), "signing out" stops reading. Everything the window and tray see — `status_changed`,
`events_committed`, the readers — is the tenant session's (tenant_session.py), so nothing downstream can tell
the two apart. The NATS client is imported when a hub is first read, not at the app's start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject

from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.secret_store import SecretStore
from tenant_events.errors import SignInRequired
from tenant_events.hub.profile import HubProfile
from tenant_events.monitor import Retention
from tenant_events.paths import AppPaths
from tenant_events.stream.states import StreamState
from tenant_events.ui.app.tenant_session import Opener, TenantSession
from tenant_events.view.tenant_status import TenantStatus, TrayState

log = logging.getLogger(__name__)


class HubSession(TenantSession):
    """A `TenantSession` whose monitor reads `hub_profile`'s tenant from the hub."""

    def __init__(
        self,
        hub_profile: HubProfile,
        paths: AppPaths,
        secrets: SecretStore,
        retention: Retention | None = None,
        parent: QObject | None = None,
    ) -> None:
        # Not TenantSession.__init__: that one takes a tenant's sign-in profile, which a hub tenant has not.
        QObject.__init__(self, parent)
        self.hub_profile = hub_profile
        self.name = hub_profile.name
        self.paths = paths
        self._secrets = secrets
        self._http = None
        self._retention = retention
        self.auth = None
        self.monitor = None
        self.user = ""
        self.paused = False
        self.pages = None
        self.aggregates = None
        self.status = TenantStatus(self.name, reason="not connected to the hub yet")

    @property
    def is_signed_in(self) -> bool:
        return self.monitor is not None and self.monitor.state.state is not StreamState.SIGNED_OUT

    async def restore(self) -> bool:
        """Start reading from the hub with the stored secret; False when there is none (or no keyring)."""
        from tenant_events.hub.viewer_monitor import profile_monitor

        if self.monitor is not None:
            return True
        try:
            monitor = await asyncio.to_thread(
                profile_monitor, self.hub_profile, self.paths, self._secrets, retention=self._retention
            )
        except SignInRequired as exc:
            log.info("%s: %s", self.name, exc.message)
            self._set_status(TrayState.SIGNED_OUT, f"not connected to the hub: {exc.message}")
            self.sign_in_failed.emit(self.name, str(exc))
            return False
        monitor.on_state.append(self._on_state)
        monitor.on_commit.append(self._on_commit)
        self.monitor = monitor
        await monitor.start()
        self._open_readers(monitor)
        if self.paused:
            monitor.pause()
        return True

    async def sign_in(
        self, opener: Opener, on_listener: Callable[[LoopbackListener], None] | None = None
    ) -> bool:
        """No browser for a hub: a new start with the keyring's secret (after the hub refused it, say)."""
        await self.stop()
        return await self.restore()

    async def sign_out(self) -> None:
        await self.stop()
        self._set_status(TrayState.SIGNED_OUT, "disconnected from the hub")
