"""One tenant in the app: sign-in (restore or browser), its `TenantMonitor`, and Qt signals for the UI.

The single adapter between the Qt-free core and the widgets (STYLE.md §2): monitor callbacks (loop thread =
Qt thread under qasync) become `status_changed` and `events_committed` signals. The browser opener is
injected so tests act as the browser (common brief, contract 1).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import QObject, Signal

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.runner import AlertRunner
from tenant_events.auth.loopback import LoopbackListener
from tenant_events.auth.secret_store import SecretStore
from tenant_events.auth.session import AuthSession
from tenant_events.auth.sign_in import restore_session, sign_in
from tenant_events.errors import SignInRequired
from tenant_events.monitor import Retention, TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import TenantProfile
from tenant_events.store import CommitResult, EventReader
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.request import format_from_timestamp
from tenant_events.stream.states import StateChange, StreamState, state_line
from tenant_events.ui.alerts.tenant_rules import attach_rules
from tenant_events.view.reader_pages import ReaderPages
from tenant_events.view.tenant_status import TenantStatus, TrayState

log = logging.getLogger(__name__)
FIRST_LOOKBACK = timedelta(hours=24)
Opener = Callable[[str], Awaitable[None] | None]

TRAY_STATE = {
    StreamState.CONNECTING: TrayState.RECONNECTING,
    StreamState.RECONNECTING: TrayState.RECONNECTING,
    StreamState.RATE_LIMITED: TrayState.RECONNECTING,
    StreamState.TOO_MANY_CONNECTIONS: TrayState.RECONNECTING,
    StreamState.CATCHING_UP: TrayState.CATCHING_UP,
    StreamState.LIVE: TrayState.LIVE,
    StreamState.PAUSED: TrayState.PAUSED,
    StreamState.SIGNED_OUT: TrayState.SIGNED_OUT,
    StreamState.ERROR: TrayState.ERROR,
    StreamState.STOPPED: TrayState.PAUSED,
}


class TenantSession(QObject):
    status_changed = Signal(object)  # TenantStatus
    events_committed = Signal(str, int, int, int)  # tenant, first seq, last seq, rows inserted
    signed_in = Signal(str, str)  # tenant, user display name
    sign_in_failed = Signal(str, str)  # tenant, message
    alerts_evaluated = Signal(str, object)  # tenant, alerts.evaluator.StepResult (raised or updated alerts)

    def __init__(
        self,
        profile: TenantProfile,
        paths: AppPaths,
        secrets: SecretStore,
        http: Any,
        retention: Retention | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.profile = profile
        self.name = profile.name
        self.paths = paths
        self._secrets = secrets
        self._http = http
        self._retention = retention
        self.auth: AuthSession | None = None
        self.monitor: TenantMonitor | None = None
        self.user = ""
        self.paused = False
        self.pages: ReaderPages | None = None
        self.aggregates: ReaderPages | None = None
        self.status = TenantStatus(self.name)
        self.alert_settings = AlertSettings()  # the app sets the settings file's before the monitor starts
        self.alert_runner: AlertRunner | None = None

    @property
    def is_signed_in(self) -> bool:
        return self.auth is not None

    async def restore(self) -> bool:
        """Use the stored refresh token (no browser); False when there is none."""
        try:
            self.auth = await restore_session(self._http, self.profile, self._secrets)
        except SignInRequired as exc:
            log.info("%s: %s", self.name, exc.message)
            self._set_status(TrayState.SIGNED_OUT, "not signed in")
            return False
        await self._start_monitor()
        return True

    async def sign_in(
        self, opener: Opener, on_listener: Callable[[LoopbackListener], None] | None = None
    ) -> bool:
        self._set_status(TrayState.SIGNED_OUT, "waiting for the browser sign-in")
        try:
            result = await sign_in(self._http, self.profile, self._secrets, opener, on_listener=on_listener)
        except SignInRequired as exc:
            self._set_status(TrayState.SIGNED_OUT, f"sign-in failed: {exc.message}")
            self.sign_in_failed.emit(self.name, str(exc))
            return False
        self.auth = result.session
        self.user = result.user.display_name
        self.signed_in.emit(self.name, self.user)
        await self._start_monitor()
        return True

    async def sign_out(self) -> None:
        await self.stop()
        if self.auth is not None:
            try:
                await self.auth.sign_out()
            except Exception as exc:  # revoking is best effort; the local token is gone anyway
                log.warning("%s: revoke failed: %s", self.name, exc)
        self.auth = None
        self._set_status(TrayState.SIGNED_OUT, "signed out")

    async def _start_monitor(self) -> None:
        assert self.auth is not None
        # Spec 000: with no cursor the stream starts at the latest events; a first start looks back
        # FIRST_LOOKBACK instead (`from_timestamp` is for the initial query only; the cursor wins after).
        since = datetime.now(UTC) - FIRST_LOOKBACK
        config = EngineConfig(
            base_url=self.profile.base_url,
            event_types=tuple(self.profile.event_types),
            name=self.name,
            from_timestamp=format_from_timestamp(since),
        )
        monitor = TenantMonitor(self.name, self.paths, config, self.auth, retention=self._retention)
        monitor.on_state.append(self._on_state)
        monitor.on_commit.append(self._on_commit)
        self.monitor = monitor
        await monitor.start()
        self.alert_runner = attach_rules(  # the alert rules: the app's one attach point
            monitor, self.alert_settings, self.name, lambda step: self.alerts_evaluated.emit(self.name, step)
        )
        self._open_readers(monitor)
        if self.paused:
            monitor.pause()

    def _open_readers(self, monitor: TenantMonitor) -> None:
        if self.pages is None:
            self.pages = ReaderPages(monitor.open_reader())
            self.aggregates = ReaderPages(monitor.open_reader())

    def open_existing(self) -> bool:
        """Readers over an existing database even while signed out (old events stay browsable)."""
        path = self.paths.database_file(self.name)
        if self.pages is None and path.exists():
            self.pages = ReaderPages(EventReader(path))
            self.aggregates = ReaderPages(EventReader(path))
        return self.pages is not None

    def pause(self, paused: bool) -> None:
        self.paused = paused
        if self.monitor is not None:
            if paused:
                self.monitor.pause()
            else:
                self.monitor.resume()

    def nudge(self) -> None:
        if self.monitor is not None and not self.paused:
            self.monitor.nudge()

    async def stop(self) -> None:
        if self.monitor is not None:
            await self.monitor.stop()
            self.monitor = None

    def close_readers(self) -> None:
        for pages in (self.pages, self.aggregates):
            if pages is not None:
                pages.close()
        self.pages = self.aggregates = None

    def refresh_status(self) -> None:
        if self.monitor is not None:
            self._on_state(self.monitor.state)

    def _on_state(self, change: StateChange) -> None:
        state = TRAY_STATE.get(change.state, TrayState.ERROR)
        self._set_status(state, state_line(change))

    def _set_status(self, state: TrayState, reason: str) -> None:
        stats = self.monitor.stats if self.monitor is not None else None
        catch_up = ""
        if state is TrayState.CATCHING_UP and stats is not None and stats.last_event_time:
            behind = _behind(stats.last_event_time)
            catch_up = f"catching up — {behind} behind, {stats.events_stored:,} events"
        self.status = TenantStatus(
            tenant=self.name,
            state=state,
            reason=reason,
            events_per_s=stats.events_per_second if stats else 0.0,
            cursor_age_s=stats.cursor_age if stats else None,
            last_event=stats.last_event_time or "" if stats else "",
            catch_up=catch_up,
            signed_in=self.auth is not None,
        )
        self.status_changed.emit(self.status)

    def _on_commit(self, result: CommitResult) -> None:
        if result.first_seq is not None and result.last_seq is not None:
            self.events_committed.emit(self.name, result.first_seq, result.last_seq, result.inserted)


def _behind(iso: str) -> str:
    try:
        lag = time.time() - datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "?"
    if lag < 120:
        return f"{lag:.0f} s"
    if lag < 7200:
        return f"{lag / 60:.0f} min"
    return f"{lag / 3600:.1f} h"
