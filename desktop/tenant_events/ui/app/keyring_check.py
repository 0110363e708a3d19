"""Opening the system keyring without holding the UI: a daemon thread, a bounded wait, lasting banners.

DesktopApp.run() shows its window first, then awaits `open_keyring(banners, prompt, wait)`:

    thread: open_secret_store(probe_wait) ─ on_state("locked" | "new") ─▶ banner: unlock it in the prompt
            └▶ OpenedStore ─▶ PendingSecretStore.resolve(store) ─▶ the caller restores each tenant's sign-in
                              └ notice ─▶ lasting banner in the window and in the sign-in prompt

A locked or new keyring makes the first read open the desktop's password prompt, which may stay unanswered;
until the keyring answers (or `keyring_wait` passes) the app runs normally and only the restore of stored
sign-ins waits. A daemon thread rather than asyncio.to_thread: an unanswered prompt must not hold the default
executor, whose shutdown the app's exit waits for. The thread may answer after the app has quit and its window
is gone (a slow D-Bus under load): what it posts then is dropped, never shown on a deleted banner.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import threading
from collections.abc import Callable
from typing import Any, Protocol

import shiboken6

from tenant_events.tenant.sign_in import MemorySecretStore, OpenedStore, open_secret_store
from tenant_events.ui.dialogs.sign_in_prompt import SignInPrompt
from tenant_events.ui.look.banners import BannerArea

KEYRING_WAIT = 30.0  # seconds to wait for an unlock prompt before signing in for this session only
BANNER_KEY = "keyring"

WAITING = {
    "locked": "<b>The system keyring is locked.</b> Unlock it in the password prompt to stay signed in; "
    "until then, sign-ins last only while Tenant Events runs.",
    "new": "<b>The system keyring has not been set up yet.</b> Choose its password in the prompt to stay "
    "signed in; until then, sign-ins last only while Tenant Events runs.",
}


def session_only_text(reason: str) -> str:
    """The lasting banner when sign-ins will not be remembered, with the reason."""
    return (
        f"<b>Sign-ins last only while Tenant Events runs:</b> {html.escape(reason)}. Unlock or install a "
        "system keyring (GNOME Keyring, KWallet) and restart Tenant Events to stay signed in."
    )


class KeyringOpener(Protocol):
    """How the keyring is opened (`open_secret_store`); blocking, called on the daemon thread."""

    def __call__(self, *, probe_wait: float, on_state: Callable[[str | None], None]) -> OpenedStore: ...


async def open_keyring(
    banners: BannerArea, prompt: SignInPrompt, wait: float, opener: KeyringOpener = open_secret_store
) -> OpenedStore:
    """Open the keyring off the UI thread (waiting up to `wait` s for an unlock prompt) and banner what the user
    must know; the app resolves its pending store with the result."""
    loop = asyncio.get_running_loop()
    result: asyncio.Future[OpenedStore] = loop.create_future()
    awaited = [True]  # until this call has ended (answered, or cancelled as the app quits)

    def post(fn: Callable[..., Any], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the app has quit meanwhile
            loop.call_soon_threadsafe(fn, *args)

    def waiting(state: str | None) -> None:  # on the loop thread
        if awaited[0] and shiboken6.isValid(banners):
            _waiting(banners, state)

    def work() -> None:
        try:
            opened = opener(probe_wait=wait, on_state=lambda s: post(waiting, s))
        except Exception as exc:  # a backend bug: sign in for this session, and say why like any other reason
            reason = f"the system keyring failed to open ({type(exc).__name__})"
            opened = OpenedStore(
                MemorySecretStore(), f"Sign-in will last only while the app runs: {reason}.", reason
            )
        post(_deliver, result, opened)

    threading.Thread(target=work, name="keyring-open", daemon=True).start()
    try:
        opened = await result
    finally:
        awaited[0] = False
    if not (shiboken6.isValid(banners) and shiboken6.isValid(prompt)):
        return opened  # the window went while the keyring answered: nothing left to banner
    banners.clear(BANNER_KEY)
    if opened.notice:
        text = session_only_text(opened.reason or "no usable system keyring")
        banners.show_banner(BANNER_KEY, "warning", text)
        prompt.set_warning(text)
    return opened


def _waiting(banners: BannerArea, state: str | None) -> None:
    if state in WAITING:
        banners.show_banner(BANNER_KEY, "info", WAITING[state])


def _deliver(future: asyncio.Future[OpenedStore], opened: OpenedStore) -> None:
    if not future.done():
        future.set_result(opened)
