"""The keyring's thread answering after the window is gone (a slow D-Bus under load, the app quit meanwhile):
what it posts is dropped, never shown on a deleted banner ("Internal C++ object already deleted" from a loop
callback, which failed whichever test ran next)."""

from __future__ import annotations

import asyncio
import threading

import pytest
import shiboken6

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async
from tenant_events.auth.secret_store import MemorySecretStore, OpenedStore
from tenant_events.ui.app.keyring_check import BANNER_KEY, open_keyring
from tenant_events.ui.dialogs.sign_in_prompt import SignInPrompt
from tenant_events.ui.look.banners import BannerArea

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


class SlowKeyring:
    """Says "locked" and answers only when told to: the prompt nobody has answered yet."""

    def __init__(self) -> None:
        self.go_on = threading.Event()
        self.answered = threading.Event()

    def __call__(self, *, probe_wait: float, on_state) -> OpenedStore:
        self.go_on.wait(30)
        on_state("locked")
        self.answered.set()
        return OpenedStore(MemorySecretStore(), "session only", "the system keyring is locked")


def loop_errors(qloop, scenario):
    """(what `scenario` returned, the errors the loop's callbacks raised meanwhile)."""
    errors: list[str] = []
    qloop.set_exception_handler(lambda _loop, ctx: errors.append(str(ctx.get("exception") or ctx["message"])))
    try:
        return run_async(qloop, scenario(), timeout=60), errors
    finally:
        qloop.set_exception_handler(None)


def test_an_answer_after_the_app_quit_and_its_window_went_is_dropped(qapp, qloop):
    keyring = SlowKeyring()

    async def scenario() -> None:
        banners, prompt = BannerArea(), SignInPrompt()
        task = asyncio.ensure_future(open_keyring(banners, prompt, 5.0, opener=keyring))
        await asyncio.sleep(0)
        task.cancel()  # the app quits while the prompt is open
        shiboken6.delete(banners)
        shiboken6.delete(prompt)
        keyring.go_on.set()
        await asyncio.to_thread(keyring.answered.wait, 30)
        for _ in range(20):  # what the thread posted runs on the loop
            await asyncio.sleep(0.01)

    assert loop_errors(qloop, scenario)[1] == []


def test_a_window_gone_before_the_answer_is_not_touched(qapp, qloop):
    keyring = SlowKeyring()

    async def scenario() -> OpenedStore:
        banners, prompt = BannerArea(), SignInPrompt()
        task = asyncio.ensure_future(open_keyring(banners, prompt, 5.0, opener=keyring))
        await asyncio.sleep(0)
        shiboken6.delete(banners)  # gone without the wait being cancelled
        keyring.go_on.set()
        return await task

    opened, errors = loop_errors(qloop, scenario)
    assert opened.reason == "the system keyring is locked" and errors == []


def test_a_live_window_is_told(qapp, qloop):
    keyring = SlowKeyring()
    banners, prompt = BannerArea(), SignInPrompt()

    async def scenario() -> None:
        keyring.go_on.set()
        await open_keyring(banners, prompt, 5.0, opener=keyring)

    assert loop_errors(qloop, scenario)[1] == []
    assert "Sign-ins last only while Tenant Events runs" in banners.banners[BANNER_KEY].text
