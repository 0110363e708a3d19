"""Settings ▸ Alert destinations with the real keyring and a real local receiver: add, edit, a bad URL shown under
its field, "Send a test alert" with the result under the field (a 401 says why), remove."""

from __future__ import annotations

import asyncio
import json
import os
import uuid

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from tenant_events.destinations.editor import DestinationEditor
from tenant_events.destinations.registry import slot
from tenant_events.settings import Settings
from tenant_events.tenant.sign_in import open_secret_store
from tenant_events.ui.settings.settings_dialog import SettingsDialog

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.gui,
    pytest.mark.dbus,
    pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE),
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def test_destinations_page_adds_tests_and_removes(qloop, qtbot, ui_paths, httpserver):
    httpserver.expect_request("/ok", method="POST").respond_with_data("ok")
    httpserver.expect_request("/revoked", method="POST").respond_with_data("no", status=401)
    store = open_secret_store().store
    name = f"chat-{uuid.uuid4().hex[:6]}"
    token = "tk-" + uuid.uuid4().hex
    good = f"json://127.0.0.1:{httpserver.port}/ok?+X-Token={token}"
    d = SettingsDialog(Settings(), set(), None, DestinationEditor(ui_paths, store))
    qtbot.addWidget(d)
    d.show()
    page = d.destinations_page
    d.tabs.setCurrentWidget(page)

    async def scenario() -> None:
        await page.load()
        assert page.list.count() == 0
        # a URL Apprise does not know: the problem under the URL field, nothing saved
        page.name.setText(name)
        page.url.setText("nope://what")
        page.save_button.click()
        await until(lambda: page.url_error.isVisible(), 10, "the URL problem")
        assert "nope:// is not a service Apprise knows" in page.url_error.text()
        assert page.list.count() == 0
        # a good one, critical only
        page.url.setText(good)
        page.severity["warning"].setChecked(False)
        page.save_button.click()
        await until(lambda: page.list.count() == 1, 10, "saved")
        assert page.list.item(0).text() == f"{name} (critical)"
        assert [p.name for p in d.settings.destinations] == [name]  # OK/Apply keep it
        saved = (ui_paths.settings_file).read_text()
        assert token not in saved and json.loads(saved)["destinations"][0]["severities"] == ["critical"]
        # the stored URL is tested when the field is empty
        page.test_button.click()
        await until(lambda: page.test_result.text().startswith("✓"), 20, "the test")
        assert page.test_result.text() == "✓ Test alert delivered."
        # a revoked token typed in: the test says why, under the field
        page.url.setText(f"json://127.0.0.1:{httpserver.port}/revoked")
        page.test_button.click()
        await until(lambda: page.test_result.text().startswith("✗"), 20, "the failed test")
        assert page.test_result.text() == (
            "✗ Not delivered: HTTP 401 Unauthorized: the receiver refused the URL or its token. "
            "Check the URL and its token."
        )
        d.resize(1000, 640)
        save_screenshot(d, "destinations-failed-test")
        # remove: gone from the file and the keyring
        page.url.clear()
        page.list.setCurrentRow(0)
        page.remove_button.click()
        await until(lambda: page.list.count() == 0, 10, "removed")
        assert d.settings.destinations == []

    try:
        run_async(qloop, scenario(), timeout=90)
    finally:
        store.delete(slot(ui_paths, name))
    assert store.get(slot(ui_paths, name)) is None


def test_the_app_delivers_its_alerts_to_the_destinations(qloop, qapp, ui_paths, make_simulator, httpserver):
    """Without a hub, the app itself routes what its rules raise."""
    import asyncio

    from helpers.browser import act_as_browser
    from helpers.fixtures_ui import profile_for, running_app
    from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
    from tenant_events.destinations.registry import make_destination, save_destination
    from tenant_events.settings import load_settings, save_settings

    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    sim = make_simulator(seed=8, backlog=0, rate=4.0, heartbeat=0.2, test_purpose_every=0)
    around_the_clock = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
    save_settings(ui_paths, Settings(alerts=AlertSettings(working_hours=around_the_clock)))
    store = open_secret_store().store
    name = f"app-{uuid.uuid4().hex[:6]}"
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    save_destination(ui_paths, store, make_destination(name, url, severities=["warning", "critical"]), url)
    visits: list[asyncio.Future[str]] = []

    def browser(u: str) -> None:
        visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, u)))

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=store) as app:
            app.settings = load_settings(ui_paths)
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            await asyncio.to_thread(sim.scenario, "org_deleted")
            await until(lambda: any(r.path == "/hook" for r, _ in httpserver.log), 30, "the delivery")

    try:
        run_async(qloop, scenario(), timeout=120)
    finally:
        store.delete(slot(ui_paths, name))
        for v in visits:
            v.cancel()
    [(request, _)] = [(r, s) for r, s in httpserver.log if r.path == "/hook"]
    body = json.loads(request.get_data())
    assert body["title"].startswith("[warning] Organization deleted — ")
    assert body["link"].startswith("tenant-events://alert/acme/")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_url_typed_can_be_checked_before_saving_and_is_masked_after(qapp, qloop, qtbot, ui_paths, theme):
    from PySide6.QtWidgets import QLineEdit

    from tenant_events.ui.look.theme import apply_theme

    apply_theme(qapp, theme)
    store = open_secret_store().store
    name = f"hook-{uuid.uuid4().hex[:6]}"
    url = f"json://hooks.example/alerts?+X-Token=tk-{uuid.uuid4().hex[:8]}"
    d = SettingsDialog(Settings(), set(), None, DestinationEditor(ui_paths, store))
    qtbot.addWidget(d)
    d.resize(1000, 600)
    d.show()
    page = d.destinations_page
    d.tabs.setCurrentWidget(page)

    async def scenario() -> None:
        await page.load()
        page.name.setText(name)
        page.url.setText(url)
        assert page.url.echoMode() == QLineEdit.EchoMode.Password  # masked while typed
        page.show_url.click()  # the user looks at what was typed
        assert page.url.echoMode() == QLineEdit.EchoMode.Normal and page.url.displayText() == url
        save_screenshot(d, f"destination-url-shown-{theme}")
        page.save_button.click()
        await until(lambda: page.list.count() == 1, 10, "saved")
        # saved: the field empty and masked again, the stored URL shown masked
        assert page.url.text() == "" and not page.show_url.isChecked()
        assert page.url.echoMode() == QLineEdit.EchoMode.Password
        assert page.url_note.text().startswith("Now: ") and "tk-" not in page.url_note.text()
        await asyncio.to_thread(page.editor.remove, name)

    try:
        run_async(qloop, scenario())
    finally:
        apply_theme(qapp, "light")


def test_a_test_alert_answering_after_another_destination_is_chosen_is_not_shown_under_it(
    qloop, qtbot, ui_paths, httpserver
):
    """ "Send a test alert" waits on the receiver (seconds when it is slow); the user picks another destination
    meanwhile: the first one's result must not be shown under the second, whose URL it says nothing about. The
    receiver holds the test until the test lets it go, after the choice."""
    import threading

    from werkzeug import Response

    reached, release = threading.Event(), threading.Event()

    def slow(_request):
        reached.set()
        assert release.wait(30), "the receiver was never let go"
        return Response("no", status=401)

    httpserver.expect_request("/slow", method="POST").respond_with_handler(slow)
    httpserver.expect_request("/ok", method="POST").respond_with_data("ok")
    store = open_secret_store().store
    names = [f"slow-{uuid.uuid4().hex[:6]}", f"ok-{uuid.uuid4().hex[:6]}"]
    d = SettingsDialog(Settings(), set(), None, DestinationEditor(ui_paths, store))
    qtbot.addWidget(d)
    d.show()
    page = d.destinations_page
    d.tabs.setCurrentWidget(page)

    async def scenario() -> None:
        await page.load()
        for name, path in zip(names, ("slow", "ok"), strict=True):
            page.new_destination()
            page.name.setText(name)
            page.url.setText(f"json://127.0.0.1:{httpserver.port}/{path}")
            page.save_button.click()
            await until(lambda name=name: any(p.name == name for p in page.profiles), 10, "saved")
        listed = [p.name for p in page.profiles]
        page.list.setCurrentRow(listed.index(names[0]))
        page.test_button.click()
        testing = page._task
        await until(reached.is_set, 20, "the test alert at the receiver")
        page.list.setCurrentRow(listed.index(names[1]))
        release.set()
        await asyncio.wait_for(asyncio.shield(testing), 30)
        assert page.name.text() == names[1]
        assert page.test_result.text() == "", "the first destination's result, under the second"
        assert not page.url_error.isVisible() and not page.fields_error.isVisible()

    try:
        run_async(qloop, scenario(), timeout=90)
    finally:
        release.set()
        for name in names:
            store.delete(slot(ui_paths, name))
