"""Browser sign-in for the window, one tenant at a time: the address shown (copyable) with a Cancel until it ends.

The browser may never come up (no default browser, a headless session), so the address is shown too: in the
sign-in prompt, in the welcome window while it is open, and in the status bar.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tenant_events.tenant.sign_in import LoopbackListener
from tenant_events.ui.dialogs.sign_in_prompt import SignInPrompt

if TYPE_CHECKING:
    from tenant_events.ui.dialogs.welcome import WelcomeWindow
    from tenant_events.ui.tenant_session import TenantSession
    from tenant_events.ui.window.main_window import MainWindow

Opener = Callable[[str], Awaitable[None] | None]


class SignInFlow:
    """Runs a tenant session's sign-in and shows where to finish it; `cancel` stops the waiting listener."""

    def __init__(
        self, window: MainWindow, opener: Callable[[], Opener], welcome: Callable[[], WelcomeWindow | None]
    ) -> None:
        self._window = window
        self._opener = opener  # read at each use: tests swap the app's opener after start-up
        self._welcome = welcome
        self.prompt = SignInPrompt(window)
        self.prompt.cancel_requested.connect(self.cancel)
        self.prompt.open_requested.connect(lambda url: self._opener()(url))
        self._listener: LoopbackListener | None = None
        self._tenant = ""

    async def run(self, session: TenantSession) -> bool:
        """Sign `session` in through the browser; True when it finished signed in."""
        self._tenant = session.name
        try:
            return await session.sign_in(self._open, on_listener=self._listener_started)
        finally:
            self._listener = None
            self.prompt.done_waiting()

    def cancel(self) -> None:
        if self._listener is not None:
            self._listener.cancel()

    def cancel_for(self, tenant: str) -> None:
        """Stop waiting for the browser if it is `tenant`'s sign-in that waits (the tenant is being removed)."""
        if self._tenant == tenant:
            self.cancel()

    def _listener_started(self, listener: LoopbackListener) -> None:
        self._listener = listener

    def _open(self, url: str) -> Awaitable[None] | None:
        """Open the browser, and show the address too in case no browser comes up."""
        self.prompt.show_url(self._tenant, url)
        link = f'<a href="{html.escape(url, quote=True)}">open the sign-in page</a>'
        welcome = self._welcome()
        if welcome is not None:
            welcome.status.setOpenExternalLinks(True)
            welcome.status.setText(f"Finish signing in in your browser (or {link}).")
        self._window.statusBar().showMessage("Finish signing in in your browser…", 30000)
        return self._opener()(url)
