"""While a browser sign-in is pending the app shows the address (copyable) — a browser may never come up —
and Cancel really ends the loopback listener's wait (the URL is always shown, with a copy button)."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtGui import QGuiApplication

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_address_is_shown_copyable_and_cancel_ends_the_sign_in(qloop, ui_paths, make_simulator):
    sim = make_simulator(seed=3, backlog=5, rate=0.0)
    opened: list[str] = []

    async def scenario() -> None:
        # A desktop whose browser never comes up: the opener "succeeds" and nothing else happens.
        async with running_app(ui_paths, opener=opened.append, secret_store=MemorySecretStore()) as app:
            problems: list = []
            app.problem_shown.connect(problems.append)
            pending = app.spawn(app.add_tenant(profile_for(sim, "nobrowser")))
            prompt = app.sign_in_prompt
            await until(lambda: prompt.isVisible() and bool(opened), what="the sign-in prompt")
            assert prompt.address.text() == opened[0]
            assert (
                opened[0].startswith(sim.auth_url + "/authorize?")
                and "code_challenge_method=S256" in opened[0]
            )
            assert "nobrowser" in prompt.heading.text()
            prompt.copy_button.click()
            assert QGuiApplication.clipboard().text() == opened[0]
            prompt.open_button.click()  # "Open again" asks the desktop once more
            assert opened[1] == opened[0]
            prompt.cancel_button.click()
            session = await pending
            assert not session.is_signed_in
            assert not prompt.isVisible()
            # cancelled, said as such: not "sign-in failed", and no "Sign-in … failed" problem
            assert session.status.reason == "sign-in cancelled"
            assert session.status.line() == "nobrowser: sign-in cancelled"
            assert not [n for n in problems if "failed" in n.title]

            # Signing in again and finishing in the browser closes the prompt too.
            again = app.spawn(app.sign_in("nobrowser"))
            await until(lambda: prompt.isVisible() and len(opened) == 3, what="the prompt, again")
            await asyncio.to_thread(act_as_browser, opened[2])
            await again
            assert app.sessions["nobrowser"].is_signed_in and not prompt.isVisible()

    run_async(qloop, scenario())


def test_a_warning_given_while_the_prompt_is_open_is_shown_whole(qtbot):
    """The keyring answers after the prompt opened (its password prompt went unanswered): the prompt grows so the
    whole warning reads, not its first line with the rest cut off."""
    from tenant_events.ui.app.keyring_check import session_only_text
    from tenant_events.ui.dialogs.sign_in_prompt import SignInPrompt

    prompt = SignInPrompt()
    qtbot.addWidget(prompt)
    prompt.show_url("demo", "http://127.0.0.1:1/authorize?response_type=code")
    qtbot.waitExposed(prompt)
    prompt.set_warning(session_only_text("the system keyring has not been set up yet"))
    label = prompt.banners.banners["warning"].label
    qtbot.waitUntil(lambda: label.isVisible())
    assert label.height() >= label.heightForWidth(label.width()), (
        label.height(),
        label.heightForWidth(label.width()),
    )
