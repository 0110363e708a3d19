"""A theme switch recolours the detail pane's links (the names under its title and "Open in dashboard"): they
were left in the old theme's link colour, dark blue on dark grey. An update's "What changed" table follows too."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor

from helpers.entity_stores import write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from helpers.shots import shot
from tenant_events.entities.sentences import Sentence
from tenant_events.ui.look.colors import DARK, LIGHT
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col
from tenant_events.ui.window.update_diff_view import COLOURS

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def near(widget, colour: str) -> int:
    """How many pixels of `widget` are within a small distance of `colour` (the link text's own pixels)."""
    want = QColor(colour)
    image = widget.grab().toImage()
    n = 0
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 40:
                n += 1
    return n


def test_theme_switch_recolours_the_detail_panes_links(qtbot, qapp, open_window, tmp_path):
    apply_theme(qapp, "light")
    path = tmp_path / "acme.sqlite3"
    write_store(path, 300, seed=11)
    w = open_window(path)
    row = next(
        r
        for r in range(w.model.rowCount())
        if isinstance(s := w.model.index(r, Col.SUMMARY).data(SENTENCE_ROLE), Sentence)
        and s.mentions
        and w.model.event_at(r).type == "user.updated"
    )
    w.table.selectRow(row)
    light_changed, dark_changed = COLOURS[False]["changed"][0], COLOURS[True]["changed"][0]
    qtbot.waitUntil(lambda: light_changed in w.detail.browser.toHtml().lower())
    names = w.entities.timelines.names
    qtbot.waitUntil(names.isVisible)
    w.detail.link.setText('<a href="https://example.com/">Open in dashboard</a>')
    qtbot.waitUntil(lambda: near(names, LIGHT["Link"]) > 10)
    shot(w, "detail-links-light")
    try:
        apply_theme(qapp, "dark")
        qtbot.waitUntil(lambda: near(names, DARK["Link"]) > 10)
        assert near(names, LIGHT["Link"]) == 0  # nothing left in the light theme's blue
        assert near(w.detail.link, DARK["Link"]) > 10 and near(w.detail.link, LIGHT["Link"]) == 0
        html = w.detail.browser.toHtml().lower()
        assert dark_changed in html and light_changed not in html
        shot(w, "detail-links-dark")
    finally:
        apply_theme(qapp, "light")
