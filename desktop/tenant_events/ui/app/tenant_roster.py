"""The app's tenants: one `TenantSession` (signals over a `TenantLink`) per saved profile, and what they show.

    settings.tenants ─▶ TenantRoster.add(profile) ─▶ TenantLink (tenant/link.py) ─▶ TenantSession (signals)
    session.events_committed ─▶ the window's table (new head)
    session.status_changed   ─▶ the window's status line     ─▶ `changed` (the tray redraws)
    session_added / session_removed ─▶ the app's alerts (AppAlerts listens to each session's `alerts_raised`)

Adding, signing in and out, and removing a tenant live here; saving the settings file stays with the app.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from tenant_events.paths import AppPaths
from tenant_events.problem_sink import Problem, ProblemSink
from tenant_events.settings import Settings, TenantProfile
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sign_in import SecretStore
from tenant_events.tenant.sources import of_profile
from tenant_events.ui.app.sign_in_flow import SignInFlow
from tenant_events.ui.tenant_session import TenantSession
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.view.tenant_status import TenantStatus

log = logging.getLogger(__name__)


class TenantRoster(QObject):
    """Every tenant session by profile name; all methods on the loop's (= Qt's) thread."""

    tenant_added = Signal(str)  # first shown in the window (its database exists now)
    session_added = Signal(object)  # TenantSession, before it starts (its link runs the alert rules)
    session_removed = Signal(str)  # tenant
    changed = Signal()  # a status or the set of signed-in tenants changed

    def __init__(
        self,
        paths: AppPaths,
        secrets: SecretStore,
        settings: Callable[[], Settings],
        window: MainWindow,
        sign_in_flow: SignInFlow,
        sink: ProblemSink,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._paths, self._secrets, self._settings = paths, secrets, settings
        self._window, self._flow, self._sink = window, sign_in_flow, sink
        self.sessions: dict[str, TenantSession] = {}

    def add(self, profile: TenantProfile) -> TenantSession:
        """A session for `profile`, its old events shown at once when its database exists."""
        settings = self._settings()
        # The app runs the valid rules even when one is broken (the settings show what is wrong with it).
        link = TenantLink(
            profile.name,
            self._paths,
            of_profile(profile, self._secrets),
            retention=settings.retention.tiers(),
            alerts=settings.alerts,
            strict_rules=False,
        )
        self._window.set_tenant_domain(profile.name, profile.domain)
        return self.attach(TenantSession(link, parent=self, secrets=self._secrets))

    def attach(self, session: TenantSession) -> TenantSession:
        """Wire and show a session made here or elsewhere (a hub tenant's, ui/app/hub_session.py)."""
        session.status_changed.connect(self._status_changed)
        session.events_committed.connect(lambda rows: self._events_committed(session, rows))
        session.sign_in_failed.connect(
            lambda name, text: self._sink.report(Problem("warning", f"Sign-in to {name} failed", text))
        )
        session.database_moved.connect(self._database_moved)
        self.sessions[session.name] = session
        self.session_added.emit(session)
        if session.open_existing() and session.ui_reader is not None:
            self._window.add_tenant(
                session.name, session.ui_reader, session.worker_reader, session.search_reader
            )
        self.changed.emit()
        return session

    def _database_moved(self, name: str, text: str) -> None:
        """Stays on screen until closed: the user must learn where the old events went."""
        self._window.banners.show_banner(
            f"database-moved-{name}", "warning", html.escape(text), closable=True
        )
        self._sink.report(Problem("warning", f"{name}: the event database was moved aside", text))

    async def remove(self, name: str) -> None:
        """Stop and close the tenant's session (its database file stays); a browser sign-in it waits for is
        given up."""
        self.cancel_sign_in(name)
        session = self.sessions.pop(name, None)
        if session is not None:
            await session.close()
            self._window.remove_tenant(name)
            self.session_removed.emit(name)
        self.changed.emit()

    def cancel_sign_in(self, name: str) -> None:
        self._flow.cancel_for(name)

    async def sign_in(self, name: str) -> bool:
        """Through the browser (the sign-in flow shows where); True when it finished signed in."""
        session = self.sessions[name]
        if not await self._flow.run(session):
            return False
        self._window.statusBar().clearMessage()
        if session.ui_reader is not None and name not in self._window.ui_readers:
            self._window.add_tenant(name, session.ui_reader, session.worker_reader, session.search_reader)
            self.tenant_added.emit(name)
        return True

    async def sign_out(self, name: str) -> None:
        await self.sessions[name].sign_out()
        self.changed.emit()

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()

    def set_paused(self, paused: bool) -> None:
        for session in self.sessions.values():
            session.pause(paused)

    def nudge_all(self, reason: str) -> None:
        log.info("nudging every tenant: %s", reason)
        for session in self.sessions.values():
            session.nudge()

    def refresh_status(self) -> None:
        for session in self.sessions.values():
            session.refresh_status()

    def statuses(self) -> list[TenantStatus]:
        return [s.status for s in self.sessions.values()]

    def signed_in(self) -> list[tuple[str, bool]]:
        return [(s.name, s.is_signed_in) for s in self.sessions.values()]

    def _events_committed(self, session: TenantSession, rows: CommittedRows) -> None:
        self._window.events_stored(rows)
        session.refresh_status()

    def _status_changed(self, status: TenantStatus) -> None:
        self._window.set_status(status)
        self.changed.emit()
