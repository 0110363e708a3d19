"""First run and new tenants: the welcome window, "Try the demo tenant" (the bundled simulator as a child
process, then sign-in through the browser) and "Connect your tenant" (issue 7 "First run and tenants"): the
tenant's discovery document is checked before its profile is saved."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol
from urllib.parse import urlsplit

from PySide6.QtCore import SignalInstance

from tenant_events.demo_simulator import DemoSimulator, start_demo_simulator
from tenant_events.errors import UserFixableError
from tenant_events.notice_sink import Notice, NoticeSink
from tenant_events.paths import AppPaths
from tenant_events.settings import TenantProfile, make_profile
from tenant_events.tenant.sign_in import check_tenant
from tenant_events.ui.app.tenant_session import TenantSession
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.dialogs.welcome import WelcomeWindow
from tenant_events.ui.window.main_window import MainWindow


class SimulatorOptions(Protocol):
    @property
    def simulator_args(self) -> list[str]: ...


class FirstRunHost(Protocol):
    """What first run needs of the app (the app passes itself; no import back to it)."""

    welcome: WelcomeWindow | None
    connect_dialog: ConnectTenantDialog | None
    simulator: DemoSimulator | None

    @property
    def window(self) -> MainWindow: ...
    @property
    def paths(self) -> AppPaths: ...
    @property
    def options(self) -> SimulatorOptions: ...
    @property
    def sink(self) -> NoticeSink: ...
    @property
    def demo_ready(self) -> SignalInstance: ...
    def spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]: ...
    async def add_tenant(self, profile: TenantProfile, sign_in: bool = True) -> TenantSession: ...


DEMO_TENANT = "demo"


async def start_demo(app: FirstRunHost) -> TenantSession | None:
    """Start the bundled simulator as a child, add it as the "demo" tenant and sign in through the browser."""
    if app.welcome is not None:
        app.welcome.set_busy("Starting the demo tenant…")
    app.window.statusBar().showMessage("Starting the demo tenant…")
    try:
        if app.simulator is None or not app.simulator.alive():
            app.simulator = await start_demo_simulator(app.paths.simulator_dir, app.options.simulator_args)
        sim = app.simulator
        profile = make_profile(
            name=DEMO_TENANT,
            domain=urlsplit(sim.auth_url).netloc,
            auth_url=sim.auth_url,
            base_url=sim.base_url,
            client_id=sim.demo_client_id,
        )
    except (RuntimeError, TimeoutError, UserFixableError, OSError) as exc:
        text = f"The demo tenant did not start: {exc}"
        app.sink.report(Notice("error", "Demo tenant", text))
        if app.welcome is not None:
            app.welcome.show_problem(text)
        return None
    app.demo_ready.emit(sim.base_url)
    app.window.statusBar().showMessage("Demo tenant started: sign in on its page in your browser", 8000)
    if app.welcome is not None:
        app.welcome.set_busy("Sign in to the demo tenant in your browser…")
    session = await app.add_tenant(profile)
    if app.welcome is not None:
        if session.is_signed_in:
            app.welcome.close()
            app.welcome = None
        else:
            app.welcome.show_problem("Sign-in did not finish. Try again.")
    app.window.bring_to_front()
    return session


def show_welcome(app: FirstRunHost) -> None:
    if app.welcome is None:
        app.welcome = WelcomeWindow()
        app.welcome.demo_requested.connect(lambda: app.spawn(start_demo(app)))
        app.welcome.connect_requested.connect(lambda: open_connect(app))
    app.welcome.show()
    app.welcome.raise_()


def open_connect(app: FirstRunHost, profile: TenantProfile | None = None) -> None:
    dialog = ConnectTenantDialog(profile, app.window)
    dialog.profile_ready.connect(lambda p: app.spawn(_connected(app, dialog, p)))
    app.connect_dialog = dialog
    dialog.open()


async def _connected(app: FirstRunHost, dialog: ConnectTenantDialog, profile: TenantProfile) -> None:
    """Check the tenant before anything is saved; a failure stays in the dialog, under the domain."""
    try:
        await check_tenant(profile.auth_url)
    except UserFixableError as exc:  # unreachable (NetworkError) or not this tenant's provider (ConfigError)
        text = exc.message.removeprefix("domain: ")
        dialog.check_failed("domain", f"{text} — {exc.hint}" if exc.hint else text)
        return
    if not dialog.isVisible():  # cancelled while the check ran
        return
    dialog.check_passed()
    if app.welcome is not None:
        app.welcome.close()
        app.welcome = None
    app.window.bring_to_front()
    await app.add_tenant(profile)
