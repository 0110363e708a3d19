"""One tenant in the app: Qt signals over its `TenantLink` (sign-in, stream, database, alert rules).

The single adapter between the Qt-free facade and the widgets (CONTRIBUTING.md "Style"): the link's observers (loop thread =
Qt thread under qasync) become `status_changed`, `events_committed` and `alerts_raised`. Everything else — the
sign-in, the engine, the readers, the rules — is the link's (tenant/link.py). The browser opener is injected so
tests act as the browser.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from tenant_events.errors import SignInBusy, SignInRequired
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.tenant.deliveries import Deliveries, attach_deliveries
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sign_in import LoopbackListener, Opener, SecretStore
from tenant_events.tenant.status import TRAY_STATE, tenant_status
from tenant_events.values.stream_states import StateChange, state_line
from tenant_events.view.tenant_reader import TenantReader
from tenant_events.view.tenant_status import TenantStatus, TrayState, sign_in_line

log = logging.getLogger(__name__)


class TenantSession(QObject):
    status_changed = Signal(object)  # TenantStatus
    events_committed = Signal(object)  # CommittedRows: the seq range a commit made visible
    alerts_raised = Signal(
        object
    )  # alerts.evaluator.StepResult: a rule evaluation that raised or updated alerts
    signed_in = Signal(str, str)  # tenant, user display name
    sign_in_failed = Signal(str, str)  # tenant, message
    database_moved = Signal(
        str, str
    )  # tenant, what happened: its damaged database was moved aside, and where

    def __init__(
        self, link: TenantLink, parent: QObject | None = None, secrets: SecretStore | None = None
    ) -> None:
        """`secrets`: where the alert destinations' URLs are (None: this session delivers no alerts)."""
        super().__init__(parent)
        self.link = link
        self._delivery_secrets = secrets
        self._deliveries: Deliveries | None = None
        self.name = link.name
        self.paused = False
        self._told_moved = False
        # a start and close() take turns, and nothing starts once closed: a tenant removed while it was still
        # connecting would otherwise go on following, out of the window and the settings
        self._starting = asyncio.Lock()
        self._closed = False
        self.status = TenantStatus(self.name)
        link.on_state.append(self._on_state)
        link.on_commit.append(self._on_commit)
        link.on_alerts.append(self.alerts_raised.emit)

    @property
    def is_signed_in(self) -> bool:
        return self.link.is_signed_in

    @property
    def ui_reader(self) -> TenantReader | None:
        return self.link.ui_reader

    @property
    def worker_reader(self) -> TenantReader | None:
        return self.link.worker_reader

    @property
    def search_reader(self) -> TenantReader | None:
        return self.link.search_reader

    async def restore(self) -> bool:
        """Start with the stored sign-in (no browser); False when there is none or the session is closed."""
        async with self._starting:
            return not self._closed and await self._restore()

    async def _restore(self) -> bool:
        """restore()'s work, its turn taken."""
        try:
            await self.link.start()
        except SignInRequired as exc:
            log.info("%s: %s", self.name, exc.message)
            self._set_status(TrayState.SIGNED_OUT, "not signed in")
            return False
        self._started()
        return True

    async def sign_in(
        self, opener: Opener, on_listener: Callable[[LoopbackListener], None] | None = None
    ) -> bool:
        if self._closed:
            return False
        self._set_status(TrayState.SIGNED_OUT, "waiting for the browser sign-in")
        try:
            result = await self.link.sign_in(opener, on_listener=on_listener)
        except (SignInRequired, SignInBusy) as exc:  # busy: another process held the lock to store it
            cancelled = (
                getattr(exc, "code", "") == "cancelled"
            )  # SignInFailed("cancelled"): the prompt's Cancel
            self._set_status(TrayState.SIGNED_OUT, sign_in_line(exc.message, cancelled))
            if not cancelled:
                self.sign_in_failed.emit(self.name, str(exc))
            return False
        async with self._starting:
            if self._closed:  # removed while the browser was out: what it stored goes too
                await self.link.forget_sign_in()
                return False
            self.signed_in.emit(self.name, result.user.display_name)
            await self.link.start()
            self._started()
        return True

    def _started(self) -> None:
        notice = self.link.notice
        if notice is not None and notice.moved_to is not None and not self._told_moved:
            self._told_moved = True
            self.database_moved.emit(self.name, notice.message)
        self.link.open_readers()  # the window's readers, now that the database exists
        secrets = self._delivery_secrets
        if secrets is not None and self._deliveries is None and self.link.rules is not None:
            self._deliveries = attach_deliveries(self.link, self.link.paths, lambda: secrets)
        if self.paused:
            self.link.pause()

    async def sign_out(self) -> None:
        problem = await self.link.sign_out()
        if problem is not None:  # revoking is best effort; the local token is gone anyway
            log.warning("%s: revoke failed: %s", self.name, problem)
        self._set_status(TrayState.SIGNED_OUT, "signed out")

    def open_existing(self) -> bool:
        """Readers over an existing database even while signed out (old events stay browsable)."""
        return self.link.open_readers()

    def pause(self, paused: bool) -> None:
        self.paused = paused
        if paused:
            self.link.pause()
        else:
            self.link.resume()

    def nudge(self) -> None:
        if not self.paused:
            self.link.nudge()

    async def stop(self) -> None:
        await self.link.stop()
        await self._stop_deliveries()

    async def close(self) -> None:
        """Stop, close the readers and the link's HTTP client (the app quits or the tenant is removed); a start
        under way finishes first."""
        self._closed = True
        self._interrupt()
        async with self._starting:
            await self._close()

    def _interrupt(self) -> None:
        """Cut short what a start under way waits for on the network, so close() need not wait for it."""

    async def _close(self) -> None:
        """close()'s work, its turn taken."""
        await self.link.close()
        await self._stop_deliveries()

    async def _stop_deliveries(self) -> None:
        deliveries, self._deliveries = self._deliveries, None
        if deliveries is not None:
            if deliveries.worker.kick in self.link.on_alerts:
                self.link.on_alerts.remove(deliveries.worker.kick)
            await deliveries.stop()

    def refresh_status(self) -> None:
        if self.link.running:
            self._on_state(self.link.state)

    def _on_state(self, change: StateChange) -> None:
        state = TRAY_STATE.get(change.state, TrayState.ERROR)
        self._set_status(state, state_line(change))

    def _set_status(self, state: TrayState, reason: str) -> None:
        stats = self.link.stats if self.link.running else None
        status = tenant_status(self.name, state, reason, stats, signed_in=self.is_signed_in)
        if status.cursor_age_s is None:
            status = dataclasses.replace(status, cursor_age_s=self._stored_cursor_age())
        self.status = status
        self.status_changed.emit(self.status)

    def _stored_cursor_age(self) -> float | None:
        """Before the stream has read its cursor, or while signed out: the stored one's age (one row), so
        "no cursor yet" is said only of a database that has none, not of one full of events."""
        updated = self.ui_reader.cursor().updated_at if self.ui_reader is not None else None
        return None if updated is None else max(0.0, time.time() - updated)

    def _on_commit(self, rows: CommittedRows) -> None:
        self.events_committed.emit(rows)
