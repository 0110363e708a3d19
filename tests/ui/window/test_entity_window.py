"""Names instead of ids in the window, and object timelines: the Summary column's sentence (ids a hover away and
still searchable), a click on a name opens its timeline with exactly the events that name it, back and forward,
an entry opens its event, the row menu's "Timeline of …"."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt

from helpers.entity_stores import ADMIN, GRACE, GRACE_EMAIL, GRACE_TIMELINE, HR, STARK, write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until
from helpers.fixtures_window import settle
from tenant_events.entities.sentences import Mention
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col
from tenant_events.ui.window.timeline.sentence_delegate import lay_out
from tenant_events.ui.window.timeline.timeline_model import TimelineCol

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "acme.sqlite3"
    write_store(path, 3000, seed=11)
    return path


def _row_of(w, event_type):
    for row in range(w.model.rowCount()):
        ev = w.model.event_at(row)
        if ev is not None and ev.type == event_type:
            return row
    raise AssertionError(event_type)


def _click_name(qtbot, view, index, kind):
    """Click the name of `kind` inside the cell at `index`, where the delegate draws it."""
    delegate = view.itemDelegateForColumn(index.column())
    rect = view.visualRect(index)
    sentence = index.data(SENTENCE_ROLE)
    metrics = view.fontMetrics()
    for part, x, width, _text in lay_out(sentence, metrics, rect.left(), rect.right()):
        if isinstance(part, Mention) and part.kind == kind:
            pos = QPoint(x + min(width // 2, 10), rect.center().y())
            assert delegate.mention_at(_option(view, index), index, pos.x()) == part
            qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
            return part
    raise AssertionError(f"no {kind} in {sentence}")


def _option(view, index):
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    option.rect = view.visualRect(index)
    return option


def test_summary_reads_as_a_sentence_with_the_ids_a_hover_away_and_searchable(open_window, qloop, store):
    w = open_window(store)
    row = _row_of(w, "organization.member.role.assigned")
    cell = w.model.index(row, Col.SUMMARY)
    run_async(qloop, until(lambda: cell.data() == f"{GRACE_EMAIL} added to organization Stark as admin"))
    tip = cell.data(Qt.ItemDataRole.ToolTipRole)
    assert f"user {GRACE_EMAIL}: {GRACE}" in tip and f"organization Stark: {STARK}" in tip and ADMIN in tip
    assert GRACE not in cell.data()  # words, not ids
    # the raw id still finds the events (search runs over the stored summary and JSON)
    w.filter_bar.search.setText(GRACE.split("|")[1])
    w.filter_bar.search.returnPressed.emit()
    run_async(qloop, settle(w))
    run_async(qloop, until(lambda: not w.model.counting))
    found = [w.model.event_at(r).type for r in range(w.model.rowCount())]
    assert found == [kind for kind, _ in GRACE_TIMELINE]
    run_async(qloop, until(lambda: w.model.index(0, Col.SUMMARY).data() == GRACE_TIMELINE[0][1]))


def test_clicking_a_name_opens_its_timeline_and_back_and_forward_walk_the_history(
    open_window, qloop, qtbot, store
):
    w = open_window(store)
    row = _row_of(w, "organization.member.role.assigned")
    w.table.scrollTo(w.model.index(row, Col.SUMMARY))
    run_async(qloop, until(lambda: w.model.index(row, Col.SUMMARY).data(SENTENCE_ROLE) is not None))
    _click_name(qtbot, w.table, w.model.index(row, Col.SUMMARY), "user")
    pane = w.entities.timelines.pane
    run_async(qloop, until(lambda: pane.isVisible() and pane.model.rowCount() == len(GRACE_TIMELINE)))
    got = [(r.event.type, r.sentence.text) for r in pane.model.rows]
    assert got == GRACE_TIMELINE
    assert pane.title.text() == f"Timeline of user {GRACE_EMAIL}"
    run_async(
        qloop, until(lambda: "since" in pane.state.toPlainText())
    )  # the state is read after the entries
    state = pane.state.toPlainText()
    assert "member of organization Stark since" in state
    assert "role admin in organization Stark since" in state
    assert "in group hr-8849 since" in state
    assert pane.status.text() == "5 events, newest first; double-click one to open it"
    # a name inside the timeline opens that object's timeline; back and forward return
    entry = pane.model.index(2, TimelineCol.WHAT)
    _click_name(qtbot, pane.table, entry, "organization")
    run_async(
        qloop,
        until(lambda: pane.title.text() == "Timeline of organization Stark" and pane.model.rowCount() == 5),
    )
    assert [r.event.type for r in pane.model.rows] == [
        "organization.updated",
        "organization.member.role.assigned",
        "organization.member.added",
        "group.created",
        "organization.created",
    ]
    assert pane.back_button.isEnabled() and not pane.forward_button.isEnabled()
    qtbot.keyClick(w, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    run_async(
        qloop,
        until(lambda: pane.title.text() == f"Timeline of user {GRACE_EMAIL}" and pane.model.rowCount() == 5),
    )
    assert pane.forward_button.isEnabled() and not pane.back_button.isEnabled()
    qtbot.mouseClick(pane.forward_button, Qt.MouseButton.LeftButton)
    run_async(
        qloop,
        until(lambda: pane.title.text() == "Timeline of organization Stark" and pane.model.rowCount() == 5),
    )
    qtbot.keyClick(w, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    run_async(
        qloop,
        until(lambda: pane.title.text() == f"Timeline of user {GRACE_EMAIL}" and pane.model.rowCount() == 5),
    )
    # an entry opens its event in the table and the detail pane
    created = pane.model.index(4, TimelineCol.TIME)
    pane.table.doubleClicked.emit(created)
    shown = w.model.event_at(w.table.currentIndex().row())
    assert shown is not None and shown.seq == pane.model.rows[4].event.seq and shown.type == "user.created"
    assert w.detail.shown is not None and w.detail.shown.seq == shown.seq


def test_detail_pane_names_are_links_and_the_row_menu_offers_timelines(open_window, qloop, store):
    w = open_window(store)
    row = _row_of(w, "group.member.added")
    w.table.setCurrentIndex(w.model.index(row, Col.TYPE))
    names = w.entities.timelines.names
    run_async(qloop, until(names.isVisible))  # once the page's names arrive from the worker
    assert f">{GRACE_EMAIL}</a> added to group <a" in names.text() and ">hr-8849</a>" in names.text()
    w.row_menu.open(w.model.index(row, Col.SUMMARY), QPoint(0, 0))
    menu = w.row_menu.menu
    assert menu is not None
    labels = [a.text() for a in menu.actions()]
    assert f"Timeline of user {GRACE_EMAIL}" in labels and "Timeline of group hr-8849" in labels
    group_link = next(
        part for part in names.text().split('"') if part.startswith("timeline:") and "/group/" in part
    )
    names.linkActivated.emit(group_link)
    pane = w.entities.timelines.pane
    run_async(
        qloop, until(lambda: pane.title.text() == "Timeline of group hr-8849" and pane.model.rowCount() == 2)
    )
    assert [r.event.type for r in pane.model.rows] == ["group.member.added", "group.created"]
    assert HR in pane.title.toolTip()
    menu.close()


def test_a_long_timeline_is_read_a_page_at_a_time_as_it_scrolls(open_window, qloop, tmp_path):
    import collections

    import orjson

    from tenant_events.entities.timeline_pages import PAGE
    from tenant_events.wire.references import references

    path = tmp_path / "busy.sqlite3"
    rows = write_store(path, 7000, seed=11, story=False)
    named = collections.defaultdict(list)  # (kind, id) → the events naming it, in stored order
    for seq, row in enumerate(rows, start=1):
        for key in {(r.kind, r.id) for r in references(row.type, orjson.loads(row.raw)["event"]["data"])}:
            named[key].append(seq)
    (kind, entity_id), seqs = max(named.items(), key=lambda item: len(item[1]))
    assert len(seqs) > 2 * PAGE  # long enough to need three pages
    w = open_window(path)
    w.entities.timelines.open_mention("acme", Mention(kind, entity_id, entity_id))
    pane = w.entities.timelines.pane
    run_async(qloop, until(lambda: pane.model.rowCount() == PAGE))
    assert not pane.model.done and pane.status.text() == f"{PAGE} newest events shown; scroll for older ones"
    pane.table.scrollToBottom()  # the view asks for more at its end (fetchMore), read on a worker
    run_async(qloop, until(lambda: pane.model.rowCount() == 2 * PAGE))
    while not pane.model.done:
        pane.model.fetchMore()
        run_async(qloop, until(lambda: not pane.model.loading))
    assert [r.event.seq for r in pane.model.rows] == list(reversed(seqs))  # newest first, every one, once
    assert pane.status.text() == f"{len(seqs):,} events, newest first; double-click one to open it"
