"""Windows without a live tenant: welcome, connect-your-tenant validation, settings, light and dark themes.

Screenshots go to the ignored artifacts/screenshots/ (the README's are refreshed by `./run screenshots`:
CONTRIBUTING.md "Screenshots"). Pixel checks make sure the theme really changed what is drawn, not just a
flag.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QPlainTextEdit

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, signal_future
from tenant_events.settings import Settings, make_profile
from tenant_events.store import EventReader
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.dialogs.welcome import WelcomeWindow
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.settings.settings_dialog import SettingsDialog
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture(autouse=True)
def light_again(qapp):
    yield
    apply_theme(qapp, "light")


def test_welcome_window(qtbot):
    w = WelcomeWindow()
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    with qtbot.waitSignal(w.demo_requested):
        w.demo_button.click()
    w.set_busy("Starting the demo tenant…")
    assert not w.demo_button.isEnabled()
    w.set_busy("")
    save_screenshot(w, "welcome")


def test_connect_dialog_validates_and_shows_callback_urls(qtbot):
    d = ConnectTenantDialog()
    qtbot.addWidget(d)
    d.show()
    ok = d.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not ok.isEnabled()
    # What to register is there from the start: the fixed port the README suggests, exactly as it is pasted.
    assert d.ports.text() == "53682"
    assert d.callbacks.text() == "http://127.0.0.1:53682/callback"
    d.copy_callbacks()
    assert QGuiApplication.clipboard().text() == "http://127.0.0.1:53682/callback"
    d.domain.setText("acme.eu.auth0.com")
    d.client_id.setText("bad id with spaces")
    assert not ok.isEnabled() and "bad id with spaces" in d.error_text("client_id")
    d.client_id.setText("AbCdEf0123456789AbCdEf0123456789")
    assert ok.isEnabled() and not any(d.error_text(k) for k in ("domain", "client_id", "ports"))
    d.ports.setText("53682, 53683")
    assert d.callbacks.text() == "http://127.0.0.1:53682/callback\nhttp://127.0.0.1:53683/callback"
    d.ports.setText("80")
    assert not ok.isEnabled() and "'80' is not a usable port" in d.error_text("ports")
    d.ports.setText("53682")
    d.domain.setText("http://evil.example.com")  # plain http only for loopback
    assert not ok.isEnabled() and "https://" in d.error_text("domain")
    for with_path in ("acme.eu.auth0.com/authorize", "https://acme.eu.auth0.com/api/v2"):
        d.domain.setText(with_path)
        assert not ok.isEnabled()
        assert "has a path: give the domain alone, e.g. acme.eu.auth0.com" in d.error_text("domain")
    save_screenshot(d, "connect-tenant-path")
    d.domain.setText("acme.eu.auth0.com")
    with qtbot.waitSignal(d.profile_ready) as got:
        ok.click()
    profile = got.args[0]
    assert profile.domain == "acme.eu.auth0.com" and profile.name == "acme-eu-auth0-com"
    assert profile.redirect_ports == [53682]
    assert d.isVisible() and not ok.isEnabled() and "Checking acme.eu.auth0.com" in d.status.text()
    d.check_failed("domain", "cannot reach the tenant")
    assert d.isVisible() and ok.isEnabled() and d.error_text("domain") == "cannot reach the tenant"
    save_screenshot(d, "connect-tenant")


def test_settings_dialog_round_trip(qtbot):
    s = Settings(tenants=[make_profile(domain="acme.eu.auth0.com", client_id="abc123")])
    d = SettingsDialog(s, {"acme-eu-auth0-com"})
    qtbot.addWidget(d)
    d.show()
    qtbot.waitExposed(d)
    assert "signed in" in d.tenant_list.item(0).text()
    d.tenant_list.setCurrentRow(0)
    with qtbot.waitSignal(d.sign_out_requested) as got:
        d._with_current(d.sign_out_requested)
    assert got.args == ["acme-eu-auth0-com"]
    d.theme.setCurrentIndex(2)
    d.keep_live.setValue(14)
    d.keep_archive.setValue(0)
    fam = d.types_tree.topLevelItem(0)
    fam.child(0).setCheckState(0, Qt.CheckState.Checked)
    with qtbot.waitSignal(d.settings_changed) as changed:
        d.apply()
    new = changed.args[0]
    assert (
        new.theme == "dark" and new.retention.keep_live_days == 14 and new.retention.keep_archive_days is None
    )
    assert fam.child(0).text(0) in new.notifications.event_types
    d.tabs.setCurrentIndex(1)
    save_screenshot(d, "settings-notifications")
    d.tabs.setCurrentIndex(0)
    save_screenshot(d, "settings-tenants")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_main_window_themes(qtbot, qapp, qloop, filled_store, tmp_path, theme):
    dark = apply_theme(qapp, theme)
    assert dark is (theme == "dark")
    reader, stats = EventReader(filled_store(3000)), EventReader(tmp_path / "acme.sqlite3")
    w = MainWindow(str(tmp_path / "window.ini"))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)

    async def fill() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(reader), TenantReader(stats))
        await updated

    run_async(qloop, fill())
    assert w.filter_bar.count_label.text() == "3,000 events"
    assert sum(sum(b.values()) for _, b in w.histogram.buckets) == 3000
    w.step(1)
    assert w.detail.shown is not None
    image = w.grab().toImage()
    base = QApplication.palette().color(QPalette.ColorRole.Base)
    assert (base.lightness() < 100) is dark
    # the table's background really is the theme's base colour
    table_pos = w.table.viewport().mapTo(w, w.table.viewport().rect().bottomRight()) - QPoint(5, 5)
    pixel = image.pixelColor(table_pos)
    assert abs(pixel.lightness() - base.lightness()) < 40, (pixel.name(), base.name())
    save_screenshot(w, f"main-window-{theme}")
    d = SettingsDialog(
        Settings(tenants=[make_profile(domain="acme.eu.auth0.com", client_id="abc123")]), set()
    )
    qtbot.addWidget(d)
    d.show()
    d.tabs.setCurrentIndex(1)
    save_screenshot(d, f"settings-{theme}")
    w.close()
    reader.close()
    stats.close()


def test_gap_rows_saved_filters_and_rejected_list(qtbot, qloop, tmp_path):
    """A gap the engine recorded marks the first row after it; saved filters come back; rejected frames list."""
    from helpers.events_factory import row
    from tenant_events.store import Batch, GapMarker, RejectedRow, StoreWriter
    from tenant_events.values.events import EventFilter

    path = tmp_path / "gaps.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=[row(i) for i in range(50)], cursor="a"))
    gap = GapMarker(reason="cursor expired (410); resumed from 2026-11-01T00:00:50Z")
    writer.commit_sync(
        Batch(
            events=[row(100 + i) for i in range(10)],
            gap=gap,
            rejected=[RejectedRow("user.created", "off-x", "event.id: bad pattern", '{"bad": true}')],
            cursor="b",
        )
    )
    writer.close()
    reader, stats = EventReader(path), EventReader(path)
    w = MainWindow(str(tmp_path / "window.ini"))
    qtbot.addWidget(w)
    w.show()

    async def load() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(reader), TenantReader(stats))
        await updated

    run_async(qloop, load())
    [after_gap] = reader.gaps()
    first_after = reader.newer_than(EventFilter(), after_gap.after_seq, limit=1)[0]
    above = w.model.row_of_seq(first_after.seq)  # the oldest event after the gap, just above the gap row
    below = w.model.row_of_seq(after_gap.after_seq)  # the newest event before it, just below
    assert (above, below) == (9, 11)
    assert w.model.rowCount() == 61 and w.model.event_rows == 60  # the gap is a row of its own
    assert w.model.event_at(10) is None and w.model.gap_at(10) is not None
    assert w.model.data(w.model.index(10, Col.TYPE)) == "⚠ possible gap"
    assert w.model.data(w.model.index(10, Col.SUMMARY)).startswith(
        "Events may be missing here: cursor expired"
    )
    assert "cursor expired" in w.model.data(w.model.index(10, 0), Qt.ItemDataRole.ToolTipRole)
    assert not w.model.data(w.model.index(above, Col.SUMMARY)).startswith("⚠")  # events are not tinted
    assert (
        w.model.event_at(above).seq == first_after.seq and w.model.event_at(below).seq == after_gap.after_seq
    )
    save_screenshot(w, "main-window-gap-row")
    more = StoreWriter(path)  # new events arrive above the gap row; it moves down with its neighbours
    more.commit_sync(Batch(events=[row(200 + i) for i in range(5)], cursor="c"))
    more.close()
    assert w.model.advance_head() == 5
    assert w.model.gap_at(15) is not None and w.model.event_at(16).seq == after_gap.after_seq
    assert w.gap_label.text() == "1 possible gap"
    assert w.rejected_button.text() == "1 rejected"
    w.show_rejected()
    dialog = w.findChild(QDialog)
    assert dialog is not None and "event.id: bad pattern" in dialog.findChild(QPlainTextEdit).toPlainText()
    dialog.close()

    # saved filters: saved under a name, changed, re-applied; they survive a new window on the same state file
    w.filter_bar.set_types({"user.created"})
    w.filter_bar.search.setText("user1")
    name = w.saved_filters.save_as("new users 1")
    assert w.filter_bar.describe() == "user.created · “user1”"
    w.filter_bar.clear_types()
    w.filter_bar.search.clear()
    assert w.model.event_filter.types == frozenset()
    w.saved_filters.rebuild_menu()
    saved_action = next(a for a in w.filter_bar.saved_menu.actions() if a.text() == name)
    saved_action.trigger()
    assert w.model.event_filter.types == frozenset({"user.created"}) and w.model.event_filter.query == "user1"
    w.save_layout()
    again = MainWindow(str(tmp_path / "window.ini"))
    qtbot.addWidget(again)
    again.restore_filter()
    assert name in again.saved_filters.saved
    assert again.filter_bar.selected_types() == {"user.created"}
    run_async(qloop, w.shutdown())
    reader.close()
    stats.close()
