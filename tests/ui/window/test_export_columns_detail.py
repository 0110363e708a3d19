"""Export of the filtered view (JSONL and CSV, progress, cancel, errors), the columns (content widths, Tenant and
Purpose only when they say something, the user's choices kept), and what an update changed in the detail pane."""

from __future__ import annotations

import csv

import orjson
import pytest
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QContextMenuEvent, QFont, QFontMetrics
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMenu, QPushButton

from helpers.events_factory import frame, row
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, signal_future, until
from helpers.fixtures_window import settle
from helpers.renamed_org import SAID, write_renamed_org
from tenant_events.cli.export_cmd import jsonl_line as export_line
from tenant_events.store import Batch, EventReader, EventRow, StoreWriter
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.values.events import EventFilter
from tenant_events.wire import EventMessage, EventType, decode_frame

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def export(w, qloop, target, flt=None):
    async def go():
        done = signal_future(w.exporter.finished, 60)
        m = w.model
        w.exporter.start(target, flt or m.event_filter, m.head, m.event_rows)
        shown = w.exporter.progress is not None and w.exporter.progress.isVisible()
        (result,) = await done
        return result, shown

    return run_async(qloop, go())


def test_export_the_view_as_jsonl_and_csv(open_window, filled_store, qloop, tmp_path):
    path = filled_store(12_000)
    w = open_window(path)
    target = tmp_path / "out" / "all.jsonl"
    target.parent.mkdir()
    count, progress_shown = export(w, qloop, target)
    assert count == 12_000 and progress_shown  # a big export shows its progress
    with EventReader(path) as reader:
        expected = [export_line(e, raw) for e, raw in reader.export_iter()]
    assert (
        target.read_text(encoding="utf-8").splitlines(keepends=True) == expected
    )  # as `tenant-events export`
    assert w.toast.text() == "Exported 12,000 events to all.jsonl"

    # the filtered view (sparse in the store: read event by event) as CSV, through the save dialog
    w.filter_bar.set_types({"user.deleted", "group.created"})
    assert w.model.event_rows == 1091  # 12,000 events over 22 types: 546 + 545
    dialog = w.exporter.ask(w.model.event_filter, w.model.head, w.model.event_rows)
    assert isinstance(dialog, QFileDialog) and dialog.isVisible()
    csv_target = tmp_path / "out" / "two-types.csv"

    async def choose() -> tuple:
        done = signal_future(w.exporter.finished, 60)
        dialog.selectNameFilter("CSV (*.csv)")
        dialog.setDirectory(str(csv_target.parent))
        dialog.findChild(QLineEdit, "fileNameEdit").setText(csv_target.name)  # typed by the user
        dialog.accept()
        return await done

    (result,) = run_async(qloop, choose())
    assert result == 1091
    with csv_target.open(encoding="utf-8", newline="") as exported:
        rows = list(csv.reader(exported))
    assert rows[0][:4] == ["seq", "time", "type", "event_id"] and len(rows) == 1092
    assert {r[2] for r in rows[1:]} == {"user.deleted", "group.created"}
    seqs = [int(r[0]) for r in rows[1:]]
    assert seqs == sorted(seqs)  # stored order, like the command-line export
    assert sorted(p.name for p in target.parent.iterdir()) == ["all.jsonl", "two-types.csv"]  # no temp files


def test_the_csv_summary_is_the_sentence_the_table_shows(open_window, qloop, tmp_path):
    """Names at the event's time, as the Summary cells say them, never the stored summary with raw ids."""
    path = tmp_path / "acme.sqlite3"
    write_renamed_org(path)
    w = open_window(path)
    m = w.model
    target = tmp_path / "renamed.csv"

    async def go() -> list[str]:
        def cells() -> list[str]:
            return [m.data(m.index(r, Col.SUMMARY)) for r in range(m.rowCount())]

        await until(lambda: cells() == [said for _t, said in reversed(SAID)], 20, "the table's sentences")
        return cells()

    table = run_async(qloop, go())
    count, _shown = export(w, qloop, target)
    assert count == len(SAID)
    with target.open(encoding="utf-8", newline="") as exported:
        rows = list(csv.DictReader(exported))
    assert [r["summary"] for r in rows] == table[::-1]  # oldest first, as the table says each


def test_export_cancel_and_failure_leave_no_file(open_window, filled_store, qloop, tmp_path):
    w = open_window(filled_store(20_000))
    target = tmp_path / "cancelled.jsonl"

    async def cancel_soon():
        done = signal_future(w.exporter.finished, 60)
        w.exporter.start(target, EventFilter(), w.model.head, w.model.event_rows)
        cancel = w.exporter.progress.findChild(QPushButton)
        assert cancel.text() == "Cancel"
        cancel.click()
        return await done

    assert run_async(qloop, cancel_soon()) == ("cancelled",)
    assert not target.exists() and list(tmp_path.glob(".cancelled*")) == []
    assert w.toast.text() == "Export cancelled: no file was written"
    result, _ = export(w, qloop, tmp_path / "missing-dir" / "x.jsonl")
    assert isinstance(result, str) and result.startswith(
        f"Could not write {tmp_path / 'missing-dir' / 'x.jsonl'}"
    )
    assert w.toast.text() == result


def test_export_onto_a_database_file_is_refused_and_the_database_kept(open_window, filled_store, qloop):
    path = filled_store(300)
    w = open_window(path)
    for target in (path, path.with_name(path.name + "-wal")):
        result, _ = export(w, qloop, target)
        assert isinstance(result, str) and "a database file of Tenant Events" in result, result
        assert w.toast.text() == f"Not exported: {result}"
    assert not list(path.parent.glob(".acme.sqlite3*")), "no temp file left"
    with EventReader(path) as reader:
        assert reader.count() == 300


def _store_with(tmp_path, rows: list[EventRow], name: str = "mixed"):
    path = tmp_path / f"{name}.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    writer.index_all_sync()
    writer.close()
    return path


def test_columns_fit_content_hide_what_says_nothing_and_keep_choices(open_window, filled_store, tmp_path):
    w = open_window(filled_store(440))
    table, header = w.table, w.table.horizontalHeader()
    bold = QFont(table.font())
    bold.setBold(True)
    longest = max(QFontMetrics(bold).horizontalAdvance(t.value) for t in EventType)
    assert table.columnWidth(Col.TYPE) >= longest + 8  # "organization.member.role.assigned" in full
    fm = QFontMetrics(table.font())
    ids = [w.model.data(w.model.index(r, Col.ID)) for r in range(w.model.rowCount())]
    assert table.columnWidth(Col.ID) >= max(fm.horizontalAdvance(i) for i in ids) + 8
    assert table.isColumnHidden(Col.TENANT) and table.isColumnHidden(Col.PURPOSE)  # one tenant, no purposes

    # a second tenant whose events carry a purpose: Tenant shows; Purpose shows for that tenant's set only
    second = _store_with(
        tmp_path, [row(i, purpose="test" if i % 5 == 0 else None) for i in range(60)], "globex"
    )
    w.add_tenant("globex", *(w.ui_readers["acme"].__class__(EventReader(second)) for _ in range(2)))
    assert not table.isColumnHidden(Col.TENANT)
    w.show_tenant("globex")
    run_async_settle(w)
    assert not table.isColumnHidden(Col.PURPOSE)
    w.filter_bar.test_box.setChecked(False)  # no test events in the set: nothing to say
    run_async_settle(w)
    assert table.isColumnHidden(Col.PURPOSE)
    w.filter_bar.test_box.setChecked(True)
    w.show_tenant("acme")

    # the user's choices: Event ID hidden from the header's menu, Type made narrower by hand
    pos = QPoint(header.sectionViewportPosition(Col.TYPE) + 5, 5)
    QApplication.sendEvent(
        header.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, header.mapToGlobal(pos))
    )
    menu = next(m for m in table.findChildren(QMenu) if m.isVisible() and m.accessibleName() == "Columns")
    next(a for a in menu.actions() if a.text() == "Event ID").trigger()
    menu.close()
    header.resizeSection(Col.TYPE, 150)  # what a drag of the section's edge does
    assert table.isColumnHidden(Col.ID) and table.columnWidth(Col.TYPE) == 150
    w.columns.fit()  # new rows or a new filter keep them
    assert table.isColumnHidden(Col.ID) and table.columnWidth(Col.TYPE) == 150
    w.save_layout()
    again = open_window(filled_store(30, name="other"), state="window.ini")
    assert again.table.isColumnHidden(Col.ID) and again.table.columnWidth(Col.TYPE) == 150
    again.columns.reset()
    assert not again.table.isColumnHidden(Col.ID) and again.table.columnWidth(Col.TYPE) >= longest


_LOOP: list = []


def run_async_settle(w) -> None:
    run_async(_LOOP[0], settle(w))


@pytest.fixture(autouse=True)
def _remember_loop(qloop):
    _LOOP[:] = [qloop]
    yield
    _LOOP.clear()


def _with_data(i: int, type_: str, obj: dict, previous: dict | None = None) -> EventRow:
    name, text = frame(i, type_=type_)
    message = orjson.loads(text)
    message["event"]["data"] = {"object": obj, **({"previous_object": previous} if previous else {})}
    data = orjson.dumps(message).decode()
    decoded = decode_frame(name, data)
    assert isinstance(decoded, EventMessage)
    return EventRow.from_message(decoded, data, received_at=1.0)


def test_an_update_shows_what_changed(open_window, tmp_path):
    user = {
        "user_id": "auth0|0123456789abcdef01234567",
        "email": "ada@example.com",
        "blocked": False,
        "logins_count": 3,
        "created_at": "2026-11-01T00:00:00Z",
        "updated_at": "2026-11-01T00:00:00Z",
        "identities": [],
    }
    updated = {**user, "blocked": True, "updated_at": "2026-11-01T00:00:05Z"}
    org = {"id": "org_AAAAAAAAAAAAAAAA", "name": "acme", "display_name": "Acme (1)"}
    path = _store_with(
        tmp_path,
        [
            _with_data(0, "user.created", user),
            _with_data(1, "organization.created", org),
            _with_data(2, "user.updated", updated),  # the store has the earlier state: the created event
            _with_data(3, "organization.updated", {**org, "display_name": "Acme (2)"}, previous=org),
            _with_data(4, "group.updated", {"id": "grp_abcdefghijkmnop", "name": "eng", "created_at": "t"}),
        ],
    )
    w = open_window(path)

    def shown_for(event_type: str) -> str:
        r = next(r for r in range(w.model.rowCount()) if w.model.event_at(r).type == event_type)
        w.follow.select_quietly(r)
        return w.detail.browser.toHtml()

    html = shown_for("user.updated")
    text = w.detail.browser.toPlainText()
    assert "What changed — Changed since the earlier event about this object (user.created at" in text
    assert "blocked\nfalse\ntrue" in text and "updated_at" in text and "email" not in text.split("{")[0]
    assert "#fff8c5" in html  # the changed rows are highlighted
    save_screenshot(w, "detail-update-diff")

    shown_for("organization.updated")
    text = w.detail.browser.toPlainText()
    assert "the event carries the object before and after" in text
    assert 'display_name\n"Acme (1)"\n"Acme (2)"' in text

    shown_for("group.updated")  # nothing earlier about this group: the fields it set
    assert "Fields this update set" in w.detail.browser.toPlainText()
    shown_for("user.created")
    assert "What changed" not in w.detail.browser.toPlainText()
    _ = QEvent
