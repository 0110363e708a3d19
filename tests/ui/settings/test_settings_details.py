"""Settings as a person uses them: per-type ticks look (and are) inactive while per-type notifications are off;
the rules editor shows and sets working hours, starts a new rule off and silent, shows whole rule names (a
trial's counts in good English: tests/alerts/test_rule_trial.py)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTime
from PySide6.QtWidgets import QLabel

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from helpers.shots import shot
from tenant_events.alert_settings import AlertSettings, WorkingHours
from tenant_events.settings import Settings
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.settings.settings_dialog import SettingsDialog
from tenant_events.values.retention import TierDisk

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture
def theme(qapp, request):
    apply_theme(qapp, request.param)
    yield request.param
    apply_theme(qapp, "light")


def _bright_marks(tree) -> int:
    """Pixels of the types tree's check column as bright as a tick on the dark theme (#e6edf3)."""
    image = tree.viewport().grab().toImage()
    return sum(
        image.pixelColor(x, y).lightness() > 200
        for x in range(min(60, image.width()))
        for y in range(image.height())
    )


@pytest.mark.parametrize("theme", ["light", "dark"], indirect=True)
def test_per_type_ticks_are_inactive_while_per_type_notifications_are_off(qtbot, theme):
    d = SettingsDialog(Settings(), set())
    qtbot.addWidget(d)
    d.resize(900, 700)
    d.show()
    d.tabs.setCurrentIndex(1)
    qtbot.waitExposed(d)
    assert not d.per_type.isChecked()
    assert not d.types_tree.isEnabled()
    if theme == "dark":
        assert _bright_marks(d.types_tree) == 0  # the ticks are drawn dim: nothing there is active
    shot(d, f"settings-notifications-off-{theme}")
    d.per_type.setChecked(True)
    assert d.types_tree.isEnabled()
    if theme == "dark":
        qtbot.waitUntil(lambda: _bright_marks(d.types_tree) > 20)
    shot(d, f"settings-notifications-on-{theme}")


@pytest.mark.parametrize("theme", ["light", "dark"], indirect=True)
def test_rules_editor_working_hours_new_rule_and_whole_names(qtbot, theme):
    hours = WorkingHours(start="08:00", end="18:00", days=["mon", "tue", "wed", "thu", "fri"])
    d = SettingsDialog(Settings(alerts=AlertSettings(working_hours=hours)), set())
    qtbot.addWidget(d)
    d.resize(1300, 820)
    d.show()
    page = d.rules_page
    d.tabs.setCurrentWidget(page)
    qtbot.waitExposed(d)

    # every rule's name shows whole, "Organization connection changed (warning)" included
    view = page.list
    for row in range(view.count()):
        item = view.item(row)
        need = view.fontMetrics().horizontalAdvance(item.text())
        text_left = view.visualItemRect(item).left() + 24  # after the check box
        assert text_left + need <= view.viewport().width(), item.text()

    # working hours: shown as saved, and settable
    box = page.working_hours
    assert box.isVisible()
    assert box.start.time() == QTime(8, 0) and box.end.time() == QTime(18, 0)
    assert [d_ for d_, b in box.days.items() if b.isChecked()] == ["mon", "tue", "wed", "thu", "fri"]
    box.start.setTime(QTime(9, 30))
    box.end.setTime(QTime(17, 0))
    box.days["fri"].setChecked(False)

    # a new rule starts off and silent until configured
    page.add_button.click()
    item = view.currentItem()
    assert item.text().startswith("My rule 1")
    assert item.checkState().name == "Unchecked" and not page.form.notify.isChecked()
    shot(d, f"rules-editor-{theme}")

    emitted: list[Settings] = []
    d.settings_changed.connect(emitted.append)
    for day in box.days.values():
        day.setChecked(False)
    assert d.apply() is False and box.problem.isVisible() and emitted == []
    box.days["mon"].setChecked(True)
    box.days["tue"].setChecked(True)
    assert d.apply() is True
    saved = emitted[-1].alerts
    assert (saved.working_hours.start, saved.working_hours.end) == ("09:30", "17:00")
    assert saved.working_hours.days == ["mon", "tue"]
    mine = next(e for e in saved.rules if e.get("id") == "my-rule-1")
    assert mine["enabled"] is False and mine["notify"] is False


def test_the_general_tab_shows_the_disk_each_tier_of_each_tenant_takes(qtbot):
    d = SettingsDialog(Settings(), set(), disk={"acme": TierDisk(12_345_678, 2_300_000_000)})
    qtbot.addWidget(d)
    shown = [label.text() for label in d.findChildren(QLabel)]
    assert "12.3 MB live, 2.3 GB archived" in shown, shown
