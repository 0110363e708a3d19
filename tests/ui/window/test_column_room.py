"""Column widths that hold: the table gets its width back when a timeline pane closes; the Event ID column never
disappears (it narrows when the summary needs the room, Purpose showing included, and widens again); Type is as
wide as the type names in view, not the longest of all 22."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetrics

from helpers.entity_stores import GRACE, write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until
from helpers.shots import shot
from tenant_events.entities.sentences import Mention
from tenant_events.store import Batch, StoreWriter
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.table.columns import ID_MIN, ROOMY_SUMMARY
from tenant_events.ui.window.table.event_table_model import Col

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_table_gets_its_width_back_when_the_timeline_closes(qapp, qloop, open_window, tmp_path, theme):
    apply_theme(qapp, theme)
    try:
        path = tmp_path / "acme.sqlite3"
        write_store(path, 300, seed=11)
        w = open_window(path)
        before = w.table.width()
        id_before = w.table.columnWidth(Col.ID)
        w.entities.timelines.open_mention("acme", Mention("user", GRACE, GRACE))
        pane = w.entities.timelines.pane
        run_async(qloop, until(lambda: pane.isVisible() and pane.model.rowCount() > 0, 10, "the timeline"))
        assert w.table.width() < before - 150  # the pane took room
        assert not w.table.isColumnHidden(Col.ID) and w.table.columnWidth(Col.ID) >= ID_MIN
        summary = w.table.columnWidth(Col.SUMMARY)
        assert summary >= ROOMY_SUMMARY - 40, summary  # the ID stepped aside for the summary, not the reverse
        shot(w, f"columns-timeline-open-{theme}")
        pane.close_requested.emit()
        run_async(
            qloop, until(lambda: not pane.isVisible() and w.table.width() == before, 10, "the width back")
        )
        assert w.table.columnWidth(Col.ID) == id_before  # whole again
        shot(w, f"columns-timeline-closed-{theme}")
    finally:
        apply_theme(qapp, "light")


def test_event_id_stays_when_purpose_appears_and_type_fits_the_rows(qloop, open_window, tmp_path):
    from helpers.events_factory import row

    path = tmp_path / "acme.sqlite3"
    writer = StoreWriter(path)
    rows = [
        row(i, type_="user.created" if i % 2 else "user.updated", purpose="test" if i % 3 == 0 else None)
        for i in range(200)
    ]
    writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    writer.index_all_sync()
    writer.close()
    w = open_window(path, size=(1100, 800))
    table = w.table
    run_async(qloop, until(lambda: not table.isColumnHidden(Col.PURPOSE), 10, "Purpose shown"))
    assert not table.isColumnHidden(Col.ID)  # it used to step aside when Purpose came
    bold = QFont(table.font())
    bold.setBold(True)
    longest = QFontMetrics(bold).horizontalAdvance("organization.member.role.assigned")
    assert table.columnWidth(Col.TYPE) < longest  # only user.created / user.updated to show
    assert table.columnWidth(Col.TYPE) >= QFontMetrics(bold).horizontalAdvance("user.updated")
    # a narrow window: the ID narrows (elided) rather than going, and comes back whole when there is room
    whole = w.columns.content_width(Col.ID)
    w.resize(1500, 800)
    run_async(qloop, until(lambda: table.columnWidth(Col.ID) == whole, 10, "the ID whole"))
    w.resize(760, 800)
    run_async(qloop, until(lambda: table.columnWidth(Col.ID) < whole, 10, "the ID narrower"))
    assert not table.isColumnHidden(Col.ID) and table.columnWidth(Col.ID) >= ID_MIN
    w.resize(1500, 800)
    run_async(qloop, until(lambda: table.columnWidth(Col.ID) == whole, 10, "the ID whole again"))
