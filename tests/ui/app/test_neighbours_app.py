"""The concurrency matrix beside the app: the real window follows a live simulator while every documented command,
a `stream` of the same profile and a second app run against its data dir, each to its end and again killed while
it holds the database, and while the app's own Settings and rules pages are opened and applied; after each, the
app's store is whole (tests/helpers/neighbours.py says what is looked at). The table of cases is written to
artifacts/neighbours-app.md."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_engine import OLD
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from helpers.neighbours import (
    COMMANDS,
    LONG_RUNNING,
    TENANT,
    Case,
    Writer,
    against_the_log,
    check_store,
    db_of,
    prepare,
    run_neighbour,
    stored_count,
    table,
)
from tenant_events.auth.secret_store import MemorySecretStore

pytestmark = [
    pytest.mark.gui,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.expect_warning_logs,
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "artifacts"
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


class Said(logging.Handler):
    """Every line the app logs, to look for "disk I/O error" in."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.mark.timeout(900)  # thirty commands one after another: minutes on a loaded machine
def test_every_command_beside_the_app_leaves_its_store_whole(qloop, ui_paths, make_simulator, tmp_path):
    sim = make_simulator(seed=7, backlog=300, rate=20.0, heartbeat=0.2, burst_every=0)
    said = Said()
    logging.getLogger().addHandler(said)
    data = ui_paths.data_dir
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600)}
    stream_args = ["stream", "--base-url", sim.base_url, "--name", TENANT, "--data-dir", str(data)]
    writer = Writer(
        os.getpid(), data, lambda: "\n".join(said.lines), [*stream_args, "--from-timestamp", OLD], env
    )
    db = db_of(data)
    cases: list[Case] = []

    async def wait(check, limit, what):  # the checks poll on the app's own loop, which goes on meanwhile
        return await until(check, limit, what)

    def wait_here(check, limit, what):
        return asyncio.run_coroutine_threadsafe(wait(check, limit, what), qloop).result()

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            await app.add_tenant(profile_for(sim, TENANT))
            await until(lambda: stored_count(db) >= 300, 120, "the backlog stored")
            fill = await asyncio.to_thread(prepare, writer, tmp_path, wait_here)
            for killed in (False, True):
                for name in [*COMMANDS, *LONG_RUNNING]:
                    case = Case(name, killed, stored_before=stored_count(db))
                    output = await asyncio.to_thread(run_neighbour, case, writer, tmp_path, fill)
                    await asyncio.to_thread(check_store, case, writer, output, wait_here)
                    cases.append(case)
            # The app's own pages: Settings opened on the rules page, a rule switched and applied, closed.
            case = Case("settings-and-rules-pages", False, stored_before=stored_count(db))
            app.open_settings()
            dialog = app.settings_dialog
            dialog.tabs.setCurrentWidget(dialog.rules_page)
            assert dialog.apply()
            await app.settings_sync.save()  # one save at a time: this one comes after the apply's
            dialog.reject()
            await asyncio.to_thread(check_store, case, writer, "", wait_here)
            cases.append(case)

    try:
        run_async(qloop, scenario(), timeout=280)
    finally:
        logging.getLogger().removeHandler(said)
        ARTIFACTS.mkdir(exist_ok=True)
        against_the_log(cases, sim)
        (ARTIFACTS / "neighbours-app.md").write_text(table(cases) + "\n", encoding="utf-8")
    assert not [c for c in cases if c.problems], table(cases)
    assert len(cases) == 2 * (len(COMMANDS) + len(LONG_RUNNING)) + 1
    killed_holding = {c.name for c in cases if c.killed and c.held_db}
    assert {"export", "reindex", "second-stream"} <= killed_holding and len(killed_holding) >= 6, table(cases)
