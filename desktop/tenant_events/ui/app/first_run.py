"""First run and new tenants: the welcome window, "Try the demo tenant" (the bundled simulator as a child
process, then sign-in through the browser) and "Connect your tenant": the tenant's discovery document is
checked before its profile is saved.

The app hands in how to add a tenant (`add_tenant`: save the profile, then sign in) and how to run a coroutine
in the background (`spawn`); nothing here imports the app.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import QObject, Signal

from tenant_events.demo_simulator import DemoSimulator, start_demo_simulator
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.problem_sink import Problem, ProblemSink
from tenant_events.settings import TenantProfile, make_profile, tenant_kept
from tenant_events.tenant.origin import check_origin, move_origin
from tenant_events.tenant.sign_in import check_tenant
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.dialogs.welcome import WelcomeWindow
from tenant_events.ui.tenant_session import TenantSession
from tenant_events.ui.window.main_window import MainWindow

DEMO_TENANT = "demo"
AddTenant = Callable[[TenantProfile], Awaitable[TenantSession]]


class FirstRun(QObject):
    """The welcome window, the connect dialog and the demo tenant's simulator child, while they exist."""

    demo_ready = Signal(str)  # the demo tenant's base URL, once its simulator answers

    def __init__(
        self,
        window: MainWindow,
        paths: AppPaths,
        simulator_args: list[str],
        sink: ProblemSink,
        add_tenant: AddTenant,
        spawn: Callable[[Awaitable[Any]], asyncio.Task[Any]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._window, self._paths, self._simulator_args, self._sink = window, paths, simulator_args, sink
        self._add_tenant, self._spawn = add_tenant, spawn
        self.welcome: WelcomeWindow | None = None
        self.connect_dialog: ConnectTenantDialog | None = None
        self.simulator: DemoSimulator | None = None
        self.open_hub: Callable[[], object] = lambda: None  # "Connect to a team hub" (the app sets it)
        self.saved_tenants: Callable[[], list[TenantProfile]] = list  # the saved profiles (the app sets it)

    async def start_demo(self) -> TenantSession | None:
        """Start the bundled simulator as a child, add it as the "demo" tenant and sign in through the browser."""
        if self.welcome is not None:
            self.welcome.set_busy("Starting the demo tenant…")
        self._window.statusBar().showMessage("Starting the demo tenant…")
        try:
            if self.simulator is None or not self.simulator.alive():
                self.simulator = await start_demo_simulator(self._paths.simulator_dir, self._simulator_args)
            sim = self.simulator
            profile = make_profile(
                name=DEMO_TENANT,
                domain=urlsplit(sim.auth_url).netloc,
                auth_url=sim.auth_url,
                base_url=sim.base_url,
                client_id=sim.demo_client_id,
            )
        except (RuntimeError, TimeoutError, UserFixableError, OSError) as exc:
            text = f"The demo tenant did not start: {exc}"
            self._sink.report(Problem("error", "Demo tenant", text))
            if self.welcome is not None:
                self.welcome.show_problem(text)
            return None
        # The bundled demo tenant listens on a new port each start: the same tenant, its database stays its.
        await asyncio.to_thread(move_origin, self._paths, profile.name, profile.base_url)
        self.demo_ready.emit(sim.base_url)
        self._window.statusBar().showMessage("Demo tenant started: sign in on its page in your browser", 8000)
        if self.welcome is not None:
            self.welcome.set_busy("Sign in to the demo tenant in your browser…")
        session = await self._add_tenant(profile)
        if self.welcome is not None:
            if session.is_signed_in:
                self.welcome.close()
                self.welcome = None
            else:
                cancelled = session.status.reason == "sign-in cancelled"
                self.welcome.show_problem(
                    "Sign-in cancelled." if cancelled else "Sign-in did not finish. Try again."
                )
        self._window.bring_to_front()
        return session

    def show_welcome(self) -> None:
        if self.welcome is None:
            self.welcome = WelcomeWindow()
            self.welcome.demo_requested.connect(lambda: self._spawn(self.start_demo()))
            self.welcome.connect_requested.connect(lambda: self.open_connect())
            self.welcome.hub_requested.connect(lambda: self.open_hub())
        self.welcome.show()
        self.welcome.raise_()

    def open_connect(self, profile: TenantProfile | None = None) -> None:
        dialog = ConnectTenantDialog(profile, self._window)
        dialog.profile_ready.connect(lambda p: self._spawn(self._connected(dialog, p)))
        dialog.hub_requested.connect(lambda: self.open_hub())
        self.connect_dialog = dialog
        dialog.open()

    async def _connected(self, dialog: ConnectTenantDialog, profile: TenantProfile) -> None:
        """Check the tenant before anything is saved; a failure stays in the dialog, under the domain (a name
        that already belongs to another tenant: under the name)."""
        try:
            tenant_kept(self.saved_tenants(), profile, "name")
            check_origin(self._paths, profile.name, profile.base_url, "name")
        except ConfigError as exc:
            dialog.check_failed("name", f"{exc.message.removeprefix('name: ')} — {exc.hint}")
            return
        try:
            await check_tenant(profile.auth_url)
        except (
            UserFixableError
        ) as exc:  # unreachable (NetworkError) or not this tenant's provider (ConfigError)
            text = exc.message.removeprefix("domain: ")
            dialog.check_failed("domain", f"{text} — {exc.hint}" if exc.hint else text)
            return
        if not dialog.isVisible():  # cancelled while the check ran
            return
        dialog.check_passed()
        if self.welcome is not None:
            self.welcome.close()
            self.welcome = None
        self._window.bring_to_front()
        await self._add_tenant(profile)

    def close_welcome(self) -> None:
        """A tenant was added another way (from a team hub): the first run is over."""
        if self.welcome is not None:
            self.welcome.close()
            self.welcome = None

    async def close(self) -> None:
        """Stop the demo simulator child and close what is still open (the app quits)."""
        if self.simulator is not None:
            await self.simulator.stop()
            self.simulator = None
        for w in (self.welcome, self.connect_dialog):
            if w is not None:
                w.close()
