"""The composition root of the desktop app: QApplication + qasync loop, windows, tray, tenants, shutdown.

    launch.run_gui(options) ─▶ asyncio.Runner(loop_factory=qasync.QEventLoop)  (STYLE.md §6, Python 3.11)
                         └▶ DesktopApp.run(): settings → theme → window/tray/notifier/wake watcher
                              → tenants (restore sign-ins) or the welcome window or the demo
                              → await quit (an asyncio.Event: desktop.md §4 pitfall) → orderly shutdown

Quit = set `quitting`; `run()` then stops every tenant (commits pending events), the demo simulator child,
the notifier and the HTTP client, and returns; the Runner cancels leftovers and closes the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication

from tenant_events import autostart
from tenant_events.auth.browser import open_in_background as system_opener
from tenant_events.auth.secret_store import MemorySecretStore, PendingSecretStore, SecretStore
from tenant_events.crash import DeadRun
from tenant_events.demo_simulator import DemoSimulator
from tenant_events.http import api_client
from tenant_events.monitor import Retention
from tenant_events.notice_sink import Notice, NoticeSink
from tenant_events.notifications.policy import DEFAULT_TYPES
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings, TenantProfile, load_settings, save_settings
from tenant_events.ui.alerts.app_alerts import AppAlerts
from tenant_events.ui.alerts.per_type_rule import chosen_types, with_per_type
from tenant_events.ui.app import first_run, keyring_check
from tenant_events.ui.app.crash_notice import show_crash_notice
from tenant_events.ui.app.first_run import DEMO_TENANT
from tenant_events.ui.app.sign_in_flow import Opener, SignInFlow
from tenant_events.ui.app.tenant_session import TenantSession
from tenant_events.ui.app.wake_watcher import WakeWatcher
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.dialogs.settings_dialog import SettingsDialog
from tenant_events.ui.dialogs.welcome import WelcomeWindow
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.notifications.controller import NotificationController, dnd_until
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.view.tenant_status import tooltip, worst

log = logging.getLogger(__name__)


@dataclass
class AppOptions:
    demo: bool = False
    minimized: bool = False
    simulator_args: list[str] = field(default_factory=list)
    opener: Opener = system_opener
    secret_store: SecretStore | None = None  # tests pass one; default: the system keyring
    keyring_wait: float = keyring_check.KEYRING_WAIT  # for an unlock prompt, before going session-only
    dead_runs: list[DeadRun] = field(default_factory=list)  # earlier runs that died (crash.RunMarker)
    wake_tick_ms: int = 2000


class DesktopApp(QObject):
    """Owns every window and tenant; `run()` returns the exit code once the user quits."""

    tenant_added = Signal(str)
    demo_ready = Signal(str)  # base_url
    notice_shown = Signal(object)
    started = Signal()

    def __init__(self, qapp: QApplication, paths: AppPaths, options: AppOptions, sink: NoticeSink) -> None:
        super().__init__()
        self.qapp, self.paths, self.options, self.sink = qapp, paths, options, sink
        self.quitting = asyncio.Event()
        self.settings_notices: list[str] = []
        self.settings: Settings = load_settings(paths, self.settings_notices)
        self.dark = apply_theme(qapp, self.settings.theme)
        self.sessions: dict[str, TenantSession] = {}
        self.simulator: DemoSimulator | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self.http: Any = None
        # Until the keyring answers (off the UI thread, keyring_check.py) the sessions hold a pending store.
        self.secrets: SecretStore = options.secret_store or PendingSecretStore(options.keyring_wait + 5)
        self.window = MainWindow(str(paths.config_dir / "window.ini"))
        self.sign_in_flow = SignInFlow(self.window, lambda: self.options.opener, lambda: self.welcome)
        self.sign_in_prompt = self.sign_in_flow.prompt
        self.window.restore_filter()
        self.welcome: WelcomeWindow | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.connect_dialog: ConnectTenantDialog | None = None
        self.tray: Tray | None = Tray(panel="dark") if Tray.available() else None
        self.notifications = NotificationController(self.settings.notifications, self)
        self.policy, self.notifier = self.notifications.policy, self.notifications.notifier
        self.notifier.attach_tray(self.tray.icon if self.tray else None)
        self.alerts = AppAlerts(self.window, self.tray, self.notifier, self.settings, paths)
        self.alerts.dnd_off_requested.connect(lambda: self.set_dnd(0.0))
        self.wake = WakeWatcher(tick_ms=options.wake_tick_ms, parent=self)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(1000)
        self._status_timer.timeout.connect(self._tick_status)
        self._wire()

    # -- wiring ----------------------------------------------------------------------------------------
    def _wire(self) -> None:
        w = self.window
        w.quit_requested.connect(self.quit)
        w.pause_toggled.connect(self.set_paused)
        w.settings_requested.connect(self.open_settings)
        w.unread_changed.connect(lambda _n: self._update_tray())
        w.closed_to_tray.connect(self._closed_to_tray)
        self.notifier.show_requested.connect(self.show_event)
        self.wake.woke.connect(self.nudge_all)
        self.sink.subscribe(self._show_notice)
        w.banners.link_activated.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))  # the crash report
        if self.tray is not None:
            t = self.tray
            t.open_requested.connect(w.bring_to_front)
            t.toggle_requested.connect(self.toggle_window)
            t.pause_toggled.connect(self.set_paused)
            t.dnd_requested.connect(self.set_dnd)
            t.notify_types_changed.connect(self.set_notify_types)
            t.tenant_selected.connect(self.show_tenant)
            t.sign_in_requested.connect(lambda name: self.spawn(self.sign_in(name)))
            t.sign_out_requested.connect(lambda name: self.spawn(self.sign_out(name)))
            t.quit_requested.connect(self.quit)
            t.set_notify_types(chosen_types(self.settings.alerts))
            w.keep_in_tray = True

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run a coroutine in the background with a strong reference (the loop keeps weak ones)."""
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            assert exc is not None
            self.sink.report_exception(exc, "background task")

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def run(self) -> int:
        if self.tray is not None:
            self.tray.show()
        self.http = api_client()
        for text in self.settings_notices:
            self.sink.report(Notice("warning", "Settings were reset", text))
        self.wake.start()
        self._status_timer.start()
        for profile in self.settings.tenants:
            if profile.name == DEMO_TENANT and self.options.demo:
                continue
            self._add_session(profile)
        if not self.options.minimized or self.tray is None:
            self.window.show()
        show_crash_notice(self.window.banners, self.options.dead_runs)
        self.spawn(self._restore_sign_ins(list(self.sessions.values())))
        # After the main window, so the welcome (first run) or the sign-in prompt (demo) is shown on top of it.
        if self.options.demo:
            self.spawn(self.start_demo())
        elif not self.settings.tenants:
            self.show_welcome()
        if self.tray is None:
            self.window.statusBar().showMessage(
                "No system tray found: Tenant Events runs as a normal window (closing it quits).", 15000
            )
        self.started.emit()
        await self.quitting.wait()
        await self.shutdown()
        return 0

    def quit(self) -> None:
        self.quitting.set()

    async def _restore_sign_ins(self, sessions: list[TenantSession]) -> None:
        """Stored sign-ins live in the keyring, which may wait on an unlock prompt: the window is up already."""
        if isinstance(self.secrets, PendingSecretStore):
            opened = await keyring_check.open_keyring(
                self.window.banners, self.sign_in_prompt, self.options.keyring_wait
            )
            self.secrets.resolve(opened.store)
        for session in sessions:
            self.spawn(session.restore())

    async def shutdown(self) -> None:
        if isinstance(self.secrets, PendingSecretStore):
            self.secrets.resolve(MemorySecretStore())  # nobody waits for a keyring that never answered
        self.wake.stop()
        self._status_timer.stop()
        self.window.save_layout()
        await self.window.shutdown()
        for session in list(self.sessions.values()):
            await session.stop()
            session.close_readers()
        await self.alerts.close()
        await self.notifier.close()
        if self.simulator is not None:
            await self.simulator.stop()
            self.simulator = None
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.http is not None:
            await self.http.aclose()
        if self.tray is not None:
            self.tray.hide()
        for w in (self.welcome, self.settings_dialog, self.connect_dialog):
            if w is not None:
                w.close()
        self.window.keep_in_tray = False
        self.window.hide()

    # -- tenants -----------------------------------------------------------------------------------------
    def _add_session(self, profile: TenantProfile) -> TenantSession:
        r = self.settings.retention
        retention = Retention(max_age_days=r.max_age_days, max_rows=r.max_events)
        session = TenantSession(profile, self.paths, self.secrets, self.http, retention, parent=self)
        self.alerts.add_session(session)
        session.status_changed.connect(self._status_changed)
        session.events_committed.connect(self._events_committed)
        session.sign_in_failed.connect(
            lambda name, text: self.sink.report(Notice("warning", f"Sign-in to {name} failed", text))
        )
        self.sessions[profile.name] = session
        self.window.set_tenant_domain(profile.name, profile.domain)
        if session.open_existing() and session.pages is not None:
            self.window.add_tenant(profile.name, session.pages, session.aggregates)
        self._update_tray()
        return session

    def _ensure_in_window(self, session: TenantSession) -> None:
        if session.pages is not None and session.name not in self.window._data:
            self.window.add_tenant(session.name, session.pages, session.aggregates)
            self.tenant_added.emit(session.name)

    async def add_tenant(self, profile: TenantProfile, sign_in: bool = True) -> TenantSession:
        old = self.sessions.pop(profile.name, None)
        if old is not None:
            await old.stop()
            self.window.remove_tenant(profile.name)
            old.close_readers()
        self.settings.upsert(profile)
        if self.settings.active_tenant is None:
            self.settings.active_tenant = profile.name
        await asyncio.to_thread(save_settings, self.paths, self.settings)
        session = self._add_session(profile)
        if sign_in and await self.sign_in_flow.run(session):
            self.window.statusBar().clearMessage()
            self._ensure_in_window(session)
            self.window.show_tenant(profile.name)
        return session

    async def sign_in(self, name: str) -> None:
        session = self.sessions[name]
        if await self.sign_in_flow.run(session):
            self.window.statusBar().clearMessage()
            self._ensure_in_window(session)

    async def sign_out(self, name: str) -> None:
        await self.sessions[name].sign_out()
        self._update_tray()

    async def remove_tenant(self, name: str) -> None:
        session = self.sessions.pop(name, None)
        if session is not None:
            await session.stop()
            self.window.remove_tenant(name)
            session.close_readers()
        self.notifications.forget(name)
        self.alerts.remove(name)
        self.settings.tenants = [t for t in self.settings.tenants if t.name != name]
        await asyncio.to_thread(save_settings, self.paths, self.settings)
        self._update_tray()

    async def start_demo(self) -> TenantSession | None:
        return await first_run.start_demo(self)

    def show_welcome(self) -> None:
        first_run.show_welcome(self)

    def open_connect(self, profile: TenantProfile | None = None) -> None:
        first_run.open_connect(self, profile)

    # -- settings ----------------------------------------------------------------------------------------
    def open_settings(self) -> None:
        signed = {n for n, s in self.sessions.items() if s.is_signed_in}
        dialog = SettingsDialog(self.settings, signed, self.window)
        dialog.rules_page.set_tester(self.alerts.try_rule)
        dialog.settings_changed.connect(lambda s: self.spawn(self.apply_settings(s)))
        dialog.add_tenant_requested.connect(lambda: self.open_connect())
        dialog.edit_tenant_requested.connect(lambda n: self.open_connect(self.settings.tenant(n)))
        dialog.remove_tenant_requested.connect(lambda n: self.spawn(self.remove_tenant(n)))
        dialog.sign_in_requested.connect(lambda n: self.spawn(self.sign_in(n)))
        dialog.sign_out_requested.connect(lambda n: self.spawn(self.sign_out(n)))
        self.settings_dialog = dialog
        dialog.open()

    async def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.dark = apply_theme(self.qapp, settings.theme)
        self.window.model.layoutChanged.emit()
        n = settings.notifications
        self.set_notify_types(set(n.event_types) or set(DEFAULT_TYPES), save=False)
        self.notifications.apply_mute_settings(self.settings.notifications)
        self.policy.paused = self.policy.paused or not n.enabled
        self.alerts.apply(settings)
        await asyncio.to_thread(autostart.set_enabled, settings.start_at_login)
        await asyncio.to_thread(save_settings, self.paths, settings)

    # -- events, notifications, state --------------------------------------------------------------------
    def _events_committed(self, tenant: str, first_seq: int, last_seq: int, inserted: int) -> None:
        self.window.events_stored(tenant, first_seq, last_seq, inserted)
        session = self.sessions.get(tenant)
        if session is not None:
            session.refresh_status()

    def show_tenant(self, name: str) -> None:
        self.window.show_tenant(name)
        self.window.bring_to_front()

    def show_event(self, tenant: str, seq: int) -> None:
        self.window.select_event(tenant, seq)

    def _status_changed(self, status: Any) -> None:
        self.window.set_status(status)
        self._update_tray()

    def _tick_status(self) -> None:
        for session in self.sessions.values():
            session.refresh_status()

    def _update_tray(self) -> None:
        if self.tray is None:
            return
        statuses = [s.status for s in self.sessions.values()]
        self.tray.set_state(worst(statuses), tooltip(statuses, self.window.unread))
        self.tray.set_tenants([(s.name, s.is_signed_in) for s in self.sessions.values()])

    def set_paused(self, paused: bool) -> None:
        self.policy.paused = paused
        for session in self.sessions.values():
            session.pause(paused)
        self.window.set_paused(paused)
        if self.tray is not None:
            self.tray.set_paused(paused)

    def set_dnd(self, seconds: float) -> None:
        """Tray "Do not disturb" (seconds from now; -1: until tomorrow 08:00; 0: off), kept across restarts."""
        until = dnd_until(seconds)
        n = self.settings.notifications
        n.do_not_disturb_until = until
        if until is None:
            n.do_not_disturb = False
        self.notifications.apply_mute_settings(self.settings.notifications)
        self.alerts.refresh_mute()
        self.spawn(asyncio.to_thread(save_settings, self.paths, self.settings))

    def set_notify_types(self, types: set[str], save: bool = True) -> None:
        self.policy.types = set(types)
        if save:  # ticked in the tray: the opt-in per-type alert rule notifies these types (none: it is off)
            self.settings.notifications.event_types = sorted(types)
            with_per_type(self.settings.alerts, enabled=bool(types), types=sorted(types))
            self.alerts.apply(self.settings)
        if self.tray is not None:
            self.tray.set_notify_types(chosen_types(self.settings.alerts))
            self.spawn(asyncio.to_thread(save_settings, self.paths, self.settings))

    def nudge_all(self, reason: str) -> None:
        log.info("nudging every tenant: %s", reason)
        for session in self.sessions.values():
            session.nudge()

    def toggle_window(self) -> None:
        if self.window.isVisible() and self.window.isActiveWindow():
            self.window.hide()
        else:
            self.window.bring_to_front()

    def _closed_to_tray(self) -> None:
        if not self.window.tray_hint_shown and self.tray is not None:
            self.window.tray_hint_shown = True
            self.tray.icon.showMessage(
                "Tenant Events is still running",
                "It keeps following your tenants from the tray. Quit from its menu.",
            )

    def _show_notice(self, notice: Notice) -> None:
        self.window.statusBar().showMessage(f"{notice.title}: {notice.text}", 15000)
        self.notice_shown.emit(notice)
