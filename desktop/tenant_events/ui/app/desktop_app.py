"""The composition root of the desktop app: QApplication + qasync loop, windows, tray, tenants, shutdown.

    launch.run_gui(options) ─▶ asyncio.Runner(loop_factory=qasync.QEventLoop)  (docs/architecture.md "Threads"; Python 3.11)
                         └▶ DesktopApp.run(): settings → theme → window, tray, notifications, wake watcher
                              → tenants (restore sign-ins) or the welcome window or the demo
                              → await quit (an asyncio.Event, so Qt never stops the loop mid-cleanup) → orderly shutdown

The parts, each in its own module: the tenants (tenant_roster.py, one signal adapter per `TenantLink`), the
browser sign-in (sign_in_flow.py), first run and the demo (first_run.py), the notification choices and the
alerts (ui/alerts/notification_choices.py → app_alerts.py), the tray (tray_wiring.py) and the Settings dialog
(settings_wiring.py). This file builds them and joins them.
Quit = set `quitting`; `run()` then stops every tenant (commits pending events, closes its HTTP client), the demo
simulator child and the notifier, and returns; the Runner cancels leftovers and closes the loop.
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
from tenant_events.crash import DeadRun
from tenant_events.malloc_arenas import trim_heap
from tenant_events.paths import AppPaths
from tenant_events.problem_sink import Problem, ProblemSink
from tenant_events.settings import Settings, SettingsSync, SharedSettings, TenantProfile
from tenant_events.settings.hubs import HubProfile
from tenant_events.tenant.sign_in import MemorySecretStore, PendingSecretStore, SecretStore
from tenant_events.tenant.sign_in import open_in_background as system_opener
from tenant_events.ui.alerts.alert_links import open_link
from tenant_events.ui.alerts.notification_choices import NotificationChoices
from tenant_events.ui.app import hub_connect, keyring_check, settings_wiring
from tenant_events.ui.app.crash_notice import show_crash_notice
from tenant_events.ui.app.first_run import DEMO_TENANT, FirstRun
from tenant_events.ui.app.hub_session import HubSession
from tenant_events.ui.app.sign_in_flow import Opener, SignInFlow
from tenant_events.ui.app.tenant_roster import TenantRoster
from tenant_events.ui.app.tray_wiring import TrayWiring
from tenant_events.ui.app.wake_watcher import WakeWatcher
from tenant_events.ui.dialogs.about_dialog import open_about
from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.settings.settings_dialog import SettingsDialog
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.tenant_session import TenantSession
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.url_forms import AlertLink, parse_alert_link

log = logging.getLogger(__name__)


# How long `login` waits for its browser step by default: a profile it saved is looked at again so long.
LOGIN_WAIT_S = 300.0
TRIM_MS = 60_000  # how often the heap's free pages go back to the system


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
    open_alert: AlertLink | None = None  # the alert link the app was started with


class DesktopApp(QObject):
    """Owns every window and part; `run()` returns the exit code once the user quits."""

    problem_shown = Signal(object)
    started = Signal()

    def __init__(self, qapp: QApplication, paths: AppPaths, options: AppOptions, sink: ProblemSink) -> None:
        super().__init__()
        self.qapp, self.paths, self.options, self.sink = qapp, paths, options, sink
        self.quitting = asyncio.Event()
        self.settings_notices: list[str] = []
        self.settings_sync = SettingsSync(
            SharedSettings(paths, self.settings_notices),
            self._take_in,
            lambda title, text: sink.report(Problem("warning", title, text)),
        )
        self.dark = apply_theme(qapp, self.settings.theme)
        self.tasks = TaskSet(on_done=self._task_done)
        # Until the keyring answers (off the UI thread, keyring_check.py) the tenants hold a pending store.
        self.secrets: SecretStore = options.secret_store or PendingSecretStore(options.keyring_wait + 5)
        self.window = MainWindow(str(paths.config_dir / "window.ini"))
        self.sign_in_flow = SignInFlow(
            self.window, lambda: self.options.opener, lambda: self.first_run.welcome
        )
        self.sign_in_prompt = self.sign_in_flow.prompt
        self.window.restore_filter()
        self.settings_dialog: SettingsDialog | None = None
        self.hub_dialog: ConnectHubDialog | None = None
        self.first_run = FirstRun(
            self.window, paths, options.simulator_args, sink, self.add_tenant, self.spawn, parent=self
        )
        self.first_run.open_hub = self.open_hub_connect
        self.first_run.saved_tenants = lambda: self.settings.tenants
        self.tenants = TenantRoster(
            paths, self.secrets, lambda: self.settings, self.window, self.sign_in_flow, sink, parent=self
        )
        tray = Tray(panel="dark") if Tray.available() else None
        self.tray = tray
        self.notifications = NotificationChoices(
            lambda: self.settings, self.save_settings_soon, tray, self.window, paths, self
        )
        self.notifier = self.notifications.notifier
        self.alerts = self.notifications.alerts
        self.alerts.silence_keeper.secrets = lambda: (
            self.secrets
        )  # a hub tenant's secret, as its session reads it
        self.tray_wiring = (
            TrayWiring(tray, self.window, self.tenants, self.notifications, self.spawn) if tray else None
        )
        self.wake = WakeWatcher(tick_ms=options.wake_tick_ms, parent=self)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(1000)
        self._status_timer.timeout.connect(self.tenants.refresh_status)
        self._status_timer.timeout.connect(
            lambda: self.settings_sync.follow() if self.settings_sync.changed() else None
        )
        self._trim_timer = QTimer(self)  # the heap's free pages back to the system (malloc_arenas.py)
        self._trim_timer.setInterval(TRIM_MS)
        self._trim_timer.timeout.connect(trim_heap)
        self._wire()

    @property
    def sessions(self) -> dict[str, TenantSession]:
        return self.tenants.sessions

    def _wire(self) -> None:
        w = self.window
        w.quit_requested.connect(self.quit)
        w.pause_toggled.connect(self.set_paused)
        w.settings_requested.connect(self.open_settings)
        w.about_requested.connect(lambda: open_about(self.paths, w))
        self.tenants.session_added.connect(self.alerts.add_session)
        self.tenants.session_removed.connect(self.alerts.remove)
        self.wake.woke.connect(self.tenants.nudge_all)
        self.sink.subscribe(self._show_problem)
        hub_connect.add_menu_entry(w, self.open_hub_connect)
        w.banners.link_activated.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))  # the crash report
        if self.tray is not None:
            self.tray.pause_toggled.connect(self.set_paused)
            self.tray.quit_requested.connect(self.quit)
            self.tray.hub_requested.connect(self.open_hub_connect)

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run a coroutine in the background with a strong reference (the loop keeps weak ones)."""
        return self.tasks.spawn(coro)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            assert exc is not None
            self.sink.report_exception(exc, "background task")

    @property
    def settings(self) -> Settings:
        return self.settings_sync.settings

    @settings.setter
    def settings(self, settings: Settings) -> None:
        self.settings_sync.settings = settings

    def save_settings_soon(self) -> None:
        self.spawn(self.settings_sync.save())

    def _take_in(self, before: Settings, now: Settings) -> None:
        """Settings a command saved (rules imported, a destination added, a tenant signed in to with `login`):
        in use from now on. New tenants start as at start-up; tenants a command removed stop (their databases
        stay)."""
        self.notifications.apply(now)
        had = {t.name for t in before.tenants} | {h.name for h in before.hubs}
        for name in had - ({t.name for t in now.tenants} | {h.name for h in now.hubs}):
            self.spawn(self.tenants.remove(name))
        for profile in now.tenants:
            if profile.name not in had and profile.name not in self.sessions:
                self.spawn(self._restore_added(self.tenants.add(profile)))
        for hub in now.hubs:
            if hub.name not in had and hub.name not in self.sessions:
                self.spawn(self.tenants.attach(self._hub_session(hub)).restore())

    async def _restore_added(self, session: TenantSession) -> None:
        """`login` saves the profile before its browser step: the sign-in is stored once that step is done in
        the terminal, so it is looked for again for as long as `login` waits for the browser."""
        deadline = asyncio.get_running_loop().time() + LOGIN_WAIT_S
        while not await session.restore():
            if asyncio.get_running_loop().time() > deadline or self.sessions.get(session.name) is not session:
                return
            await asyncio.sleep(5)

    # -- lifecycle ---------------------------------------------------------------------------------------
    async def run(self) -> int:
        if self.tray is not None:
            self.tray.show()
        for text in self.settings_notices:
            self.sink.report(Problem("warning", "Settings were reset", text))
        self.wake.start()
        self._status_timer.start()
        self._trim_timer.start()
        for profile in self.settings.tenants:
            if profile.name == DEMO_TENANT and self.options.demo:
                continue
            self.tenants.add(profile)
        for hub in self.settings.hubs:
            self.tenants.attach(self._hub_session(hub))
        if not self.options.minimized or self.tray is None:
            self.window.show()
        show_crash_notice(self.window.banners, self.options.dead_runs)
        self.spawn(self._restore_sign_ins(list(self.sessions.values())))
        # After the main window, so the welcome (first run) or the sign-in prompt (demo) is shown on top of it.
        if self.options.demo:
            self.spawn(self.first_run.start_demo())
        elif not self.settings.tenants and not self.settings.hubs:
            self.first_run.show_welcome()
        if self.tray is None:
            self.window.statusBar().showMessage(
                "No system tray found: Tenant Events runs as a normal window (closing it quits).", 15000
            )
        if self.options.open_alert is not None:
            self.open_alert(self.options.open_alert)
        self.started.emit()
        await self.quitting.wait()
        await self.shutdown()
        return 0

    def quit(self) -> None:
        self.quitting.set()

    def handle_argv(self, argv: list[str]) -> None:
        """A later start handed its argv over: open its alert link, else just show the window."""
        links = [link for arg in argv[1:] if (link := parse_alert_link(arg)) is not None]
        if links:
            self.open_alert(links[-1])
        else:
            self.window.bring_to_front()

    def open_alert(self, link: AlertLink) -> None:
        open_link(self.alerts, link)

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
        await self.tenants.close_all()
        await self.notifications.close()
        await self.first_run.close()
        await self.tasks.cancel()
        if self.tray is not None:
            self.tray.hide()
        for dialog in (self.settings_dialog, self.hub_dialog):
            if dialog is not None:
                dialog.close()
        self.window.keep_in_tray = False
        self.window.hide()

    # -- tenants -----------------------------------------------------------------------------------------
    async def add_tenant(self, profile: TenantProfile, sign_in: bool = True) -> TenantSession:
        """Save `profile` (replacing one of the same name) and sign in to it through the browser."""
        if profile.name in self.sessions:
            await self.tenants.remove(profile.name)
        self.settings.upsert(profile)
        if self.settings.active_tenant is None:
            self.settings.active_tenant = profile.name
        await self.settings_sync.save()
        session = self.tenants.add(profile)
        if sign_in and await self.tenants.sign_in(profile.name):
            self.window.show_tenant(profile.name)
        return session

    def open_hub_connect(self) -> ConnectHubDialog:
        return hub_connect.open_hub_connect(self)

    def _hub_session(self, profile: HubProfile) -> HubSession:
        return HubSession(
            profile,
            self.paths,
            self.secrets,
            parent=self.tenants,
            alerts=self.settings.alerts,
            retention=self.settings.retention.tiers(),
        )

    async def add_hub_session(self, profile: HubProfile) -> TenantSession:
        """A hub tenant just saved (hub_connect.py): start reading it and show it."""
        self.settings.upsert_hub(profile)
        if self.settings.active_tenant is None:
            self.settings.active_tenant = profile.name
        self.first_run.close_welcome()
        # (the file's hub, taken in a moment before, may have its session already)
        session = self.sessions.get(profile.name) or self.tenants.attach(self._hub_session(profile))
        if await self.tenants.sign_in(profile.name):
            self.window.show_tenant(profile.name)
        return session

    async def sign_in(self, name: str) -> None:
        await self.tenants.sign_in(name)

    async def remove_tenant(self, name: str) -> None:
        """Stop it, sign it out (revoked at the tenant when it answers, its keyring slot cleared whatever
        happens), forget its profile (and a hub tenant's secret); its database file stays."""
        hub = self.settings.hub(name)
        # before signing out: nothing a browser sign-in finishes is stored after it
        self.tenants.cancel_sign_in(name)
        if hub is None and name in self.sessions:
            await self.tenants.sign_out(name)
        await self.tenants.remove(name)
        self.settings.tenants = [t for t in self.settings.tenants if t.name != name]
        self.settings.hubs = [h for h in self.settings.hubs if h.name != name]
        await self.settings_sync.save()
        if hub is not None:
            await hub_connect.forget_secret(self, hub)
        if self.settings_dialog is not None:
            self.settings_dialog.forget_tenant(name, {n for n, s in self.sessions.items() if s.is_signed_in})

    # -- settings and state ------------------------------------------------------------------------------
    def open_settings(self) -> SettingsDialog:
        return settings_wiring.open_settings(self)

    async def apply_settings(self, settings: Settings) -> None:
        settings = self.settings_sync.from_dialog(settings)
        self.dark = apply_theme(self.qapp, settings.theme)
        self.window.model.layoutChanged.emit()
        self.notifications.apply(settings)
        await asyncio.to_thread(autostart.set_enabled, settings.start_at_login)
        await self.settings_sync.save()

    def set_paused(self, paused: bool) -> None:
        self.tenants.set_paused(paused)
        self.window.set_paused(paused)
        if self.tray is not None:
            self.tray.set_paused(paused)

    def set_dnd(self, seconds: float) -> None:
        self.notifications.set_dnd(seconds)

    def set_notify_types(self, types: set[str], save: bool = True) -> None:
        self.notifications.set_types(types, save)

    def _show_problem(self, problem: Problem) -> None:
        self.window.statusBar().showMessage(f"{problem.title}: {problem.text}", 15000)
        self.problem_shown.emit(problem)
