"""The app with a damaged event database: the file is moved aside (never deleted, never read as events), a banner
says where it went and stays until closed, and the tenant streams into a new database."""

from __future__ import annotations

import asyncio

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, running_app, until
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.expect_warning_logs,
]
DEMO_ARGS = ["--seed", "5", "--rate", "0", "--backlog", "50", "--heartbeat", "0.5", "--ephemeral"]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_a_damaged_database_is_moved_aside_and_the_window_says_where(qloop, ui_paths):
    damaged = ui_paths.database_file("demo")
    damaged.parent.mkdir(parents=True)
    junk = b"SQLite format 3\x00" + bytes(range(256)) * 40  # a header, then garbage: "file is not a database"
    damaged.write_bytes(junk)

    async def scenario() -> None:
        async with running_app(
            ui_paths, demo=True, opener=browser, secret_store=MemorySecretStore(), simulator_args=DEMO_ARGS
        ) as app:
            w = app.window
            await until(lambda: "demo" in app.sessions and app.sessions["demo"].is_signed_in, 60, "sign-in")
            await until(lambda: "database-moved-demo" in w.banners.banners, 30, "the banner")
            moved = [p for p in damaged.parent.iterdir() if ".corrupt-" in p.name]
            assert len(moved) == 1 and moved[0].read_bytes() == junk  # kept as it was, beside the new one
            text = w.banners.text("database-moved-demo")
            assert str(moved[0]) in text and str(damaged) in text
            await until(
                lambda: w.tenant == "demo" and w.model.rowCount() >= 50, 30, "the new database's rows"
            )

    run_async(qloop, scenario())
