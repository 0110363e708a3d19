"""Small things a person notices in daily use: F1 lists the timeline's Alt+Left / Alt+Right, the tray menu shows
no shortcut it cannot take, the tray badges leave the 22 px state icon readable, the histogram's bars fill its
width for a short stretch of events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from helpers.shots import shot, shots_dir
from tenant_events.ui.look.icons import tray_icon
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.tray.badge import badged
from tenant_events.ui.tray.tray_icon import Tray
from tenant_events.ui.window.filters.histogram import Histogram, axis_format
from tenant_events.view.tenant_status import TrayState

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_f1_lists_back_and_forward(qtbot, qapp, open_window, filled_store, theme):
    apply_theme(qapp, theme)
    try:
        w = open_window(filled_store(50))
        qtbot.keyClick(w, Qt.Key.Key_F1)
        sheet = w.menu_actions.help_dialog
        assert sheet is not None and sheet.isVisible()
        assert dict(sheet.entries)["Back / forward between timelines"] == "Alt+Left / Alt+Right"
        assert "Alt+Left" in sheet.view.toPlainText()
        shot(sheet, f"shortcuts-help-{theme}")
        sheet.close()
    finally:
        apply_theme(qapp, "light")


def test_the_tray_menu_shows_no_ctrl_p(qapp):
    tray = Tray()
    assert tray.pause_action.shortcut().isEmpty()
    assert all(a.shortcut().isEmpty() for a in tray.menu.actions())


def _changed_share(base: QImage, badged_image: QImage) -> float:
    changed = sum(
        base.pixelColor(x, y) != badged_image.pixelColor(x, y)
        for x in range(base.width())
        for y in range(base.height())
    )
    return changed / (base.width() * base.height())


@pytest.mark.parametrize("panel", ["dark", "light"])
def test_badges_leave_the_22_px_icon_readable(qapp, panel):
    base = tray_icon(TrayState.LIVE, panel)
    plain = base.pixmap(22, 22).toImage()
    both = badged(base, 3, True).pixmap(22, 22).toImage()
    assert both.size() == plain.size()
    share = _changed_share(plain, both)
    assert 0.1 < share < 0.35, share  # both badges drawn, still most of the state icon showing
    big = badged(base, 3, True).pixmap(64, 64)
    big.scaled(128, 128).save(str(shots_dir() / f"tray-badges-{panel}.png"))
    both.scaled(88, 88).save(str(shots_dir() / f"tray-badges-22px-{panel}.png"))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_histogram_bars_fill_the_width_for_a_short_stretch(qtbot, qapp, theme):
    apply_theme(qapp, theme)
    h = Histogram()
    qtbot.addWidget(h)
    h.resize(1200, 84)
    h.show()
    # 150 s of events in 5 s buckets (what the aggregates choose for it): 30 bars
    start = int(datetime(2026, 11, 26, 12, 0, tzinfo=UTC).timestamp())
    buckets = [(start + i * 5, {"user": 2 + i % 3, "group": 1}) for i in range(30)]
    h.set_data(buckets, 5)
    lo, hi = h._span()
    data = 30 * 5
    assert hi - lo == data, (hi - lo, data)  # no empty stretch before the first bar
    assert h._time_at(0) <= datetime.fromtimestamp(start, UTC) < h._time_at(0) + timedelta(seconds=5)
    shot(h, f"histogram-short-{theme}")
    apply_theme(qapp, "light")


def test_the_histogram_axis_of_a_year_names_the_years():
    start = datetime(2025, 11, 27, tzinfo=UTC).timestamp()
    end = datetime(2026, 12, 3, tzinfo=UTC).timestamp()
    ends = [datetime.fromtimestamp(t, UTC).strftime(axis_format(end - start)) for t in (start, end)]
    assert ends == ["2025-11-27", "2026-12-03"]
    assert axis_format(3 * 86400) == "%b %d %H:%M"  # a few days: the hour matters, the year is plain
