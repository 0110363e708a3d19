"""The Access view beside the event table, over a tenant whose access is known by hand (helpers/access_story.py)
among a simulated crowd: who held what at a moment, narrowed by role; what changed between two moments with the
event and who did it; a double-click opening that event in the table; a moment before the history refused; and
the auditors' report (PDF and CSV) written, its first page drawn to a picture. Screenshots in light and dark.
"""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import QDateTime, QSizeF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QTextDocument
from PySide6.QtTest import QTest

from helpers.access_story import AFTER, BEFORE, GRACE, iso, write_story
from helpers.entity_events import T0
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    SCREENSHOTS,
    run_async,
    save_screenshot,
    signal_future,
    until,
)
from tenant_events.access.filters import AccessFilter
from tenant_events.access.records import Diff, Snapshot
from tenant_events.access.report import report_html
from tenant_events.access.review import AccessReview
from tenant_events.store.access_reader import AccessReader
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.access.access_models import SEQ_ROLE, ChangeCol
from tenant_events.ui.window.access.access_page import CHANGES
from tenant_events.ui.window.access.report_writer import text_area_mm, write_report

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture(autouse=True)
def light_again(qapp):
    yield
    apply_theme(qapp, "light")


@pytest.fixture
def story_window(open_window, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write_story(path, crowd=1500)
    return open_window(path, size=(1500, 860))


def _moment(edit, when) -> None:
    edit.setDateTime(QDateTime.fromMSecsSinceEpoch(int(when.timestamp() * 1000)))


async def _answer(controller, change, check=None) -> object:
    """Make `change()` and wait for the answer it brings (the first that passes `check`)."""
    answered = signal_future(controller.answered, check=check)
    change()
    return (await answered)[0]


def _ms(when) -> int:
    return int(when.timestamp() * 1000)


def _texts(model, parent=None, depth=0) -> list[str]:
    """Every row of the tree as indented text."""
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    out = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out.append("  " * depth + index.data())
        out += _texts(model, index, depth + 1)
    return out


def _unnamed_controls(page) -> list[str]:
    """The view's visible controls that a screen reader could not name."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QAccessible
    from PySide6.QtWidgets import QAbstractButton, QWidget

    unnamed = []
    for widget in page.findChildren(QWidget):
        control = isinstance(widget, QAbstractButton) or bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
        if widget.isVisible() and control:
            iface = QAccessible.queryAccessibleInterface(widget)
            if iface is None or not iface.text(QAccessible.Text.Name).strip():
                unnamed.append(f"{type(widget).__name__} in {type(widget.parent()).__name__}")
    return unnamed


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_who_had_access_and_what_changed(qapp, qloop, story_window, theme):
    apply_theme(qapp, theme)
    w = story_window
    page, controller = w.access.page, w.access.controller

    async def scenario() -> None:
        await _answer(controller, w.show_access)
        assert page.isVisible() and page.tenant_box.currentText() == "acme"
        assert _unnamed_controls(page) == []
        page.at_now.setChecked(False)
        snapshot = await _answer(
            controller, lambda: _moment(page.at, BEFORE), lambda a: getattr(a, "at_ms", None) == _ms(BEFORE)
        )
        assert isinstance(snapshot, Snapshot) and snapshot.known
        rows = _texts(page.snapshot_model)
        stark = rows.index("  organization Stark Industries (org_stark000000001)")
        assert rows[stark + 1 : stark + 7] == [
            "    member grace@example.com has role admin",
            "    group hr has role admin",
            "    member ken@example.com has role admin through group hr",
            "    member auth0|linus000000000004 has role auditor",
            "    member grace@example.com",
            "    connection acme-saml",
        ]  # admin-like roles first, then the other roles, memberships and connections
        assert "History complete from 2026-11-01 12:00:00 UTC" in page.completeness.text()
        # Narrowed to admin-like roles: only role grants remain, Grace's and Ken's among them.
        page.role.setCurrentIndex(page.role.findData("admin-like"))
        page.role.activated.emit(page.role.currentIndex())
        admins = controller.shown
        assert admins.grants and all(g.role is not None and "admin" in g.role.name for g in admins.grants)
        tree, model = page.tree, page.snapshot_model
        assert tree.isExpanded(model.index(0, 0, model.index(0, 0)))  # a short answer is shown opened
        assert {g.user.id for g in admins.grants if g.user} >= {GRACE, "auth0|ken00000000000002"}
        qapp.processEvents()
        save_screenshot(w, f"access-at-{theme}")

        # What changed: Grace left Stark (and lost admin with it), by Backoffice Script from 203.0.113.7.
        page.role.setCurrentIndex(0)
        page.role.activated.emit(0)
        page.until_now.setChecked(False)
        _moment(page.since, BEFORE)
        _moment(page.until, AFTER)
        await _answer(
            controller,
            lambda: page.mode.setCurrentIndex(CHANGES),
            lambda a: isinstance(a, Diff) and (a.from_ms, a.to_ms) == (_ms(BEFORE), _ms(AFTER)),
        )
        model = page.changes_model
        lost = next(
            r
            for r in range(model.rowCount())
            if "grace@example.com lost role admin" in model.index(r, ChangeCol.WHAT).data()
        )
        assert (
            model.index(lost, ChangeCol.WHAT).data()
            == "grace@example.com lost role admin in organization Stark Industries"
        )
        assert (
            model.index(lost, ChangeCol.EVENT).data()
            == "grace@example.com removed from organization Stark Industries"
        )
        assert (
            model.index(lost, ChangeCol.WHO).data()
            == "by Backoffice Script (cli_backoffice) from 203.0.113.7"
        )
        assert model.index(lost, ChangeCol.CHANGE).data() == "− removed"
        text = page.completeness.text()
        assert (
            "Possible gap: events from 2026-11-01 12:01:30 UTC to 2026-11-01 12:01:40 UTC may be missing"
            in text
        )
        page.table.selectRow(lost)
        page.table.scrollTo(model.index(lost, 0))
        qapp.processEvents()
        save_screenshot(w, f"access-changes-{theme}")

        # A double-click opens the event that did it, in the table.
        seq = model.index(lost, 0).data(SEQ_ROLE)
        cell = page.table.visualRect(model.index(lost, ChangeCol.EVENT)).center()
        viewport = page.table.viewport()  # a click first: QTest's double-click alone presses no index
        QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, cell)
        QTest.mouseDClick(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, cell)
        assert w.pages.currentIndex() == 0
        await until(lambda: w.model.event_at(w.table.currentIndex().row()) is not None
                    and w.model.event_at(w.table.currentIndex().row()).seq == seq)  # fmt: skip
        assert w.model.event_at(w.table.currentIndex().row()).type == "organization.member.deleted"

    run_async(qloop, scenario())


def test_a_moment_before_the_history_cannot_be_known(qapp, qloop, story_window):
    w = story_window
    page, controller = w.access.page, w.access.controller

    async def scenario() -> None:
        await _answer(controller, w.show_access)
        page.at_now.setChecked(False)
        early = BEFORE.replace(year=2025)
        snapshot = await _answer(
            controller, lambda: _moment(page.at, early), lambda a: getattr(a, "at_ms", None) == _ms(early)
        )
        assert not snapshot.known
        assert page.body.currentWidget() is page.not_known and page.to_first.isVisible()
        assert page.unknown.text() == (
            "Who held access at 2025-11-01 12:00:50 UTC cannot be known: the stored history starts at "
            "2026-11-01 12:00:00 UTC."
        )
        qapp.processEvents()
        save_screenshot(w, "access-unknown-light")
        # The way out: the first whole second the history answers for.
        first = await _answer(controller, page.to_first.click, lambda a: getattr(a, "known", False))
        assert first.at_ms == _ms(T0) and page.body.currentWidget() is page.tree

    run_async(qloop, scenario())


def _page_images(html: str, area_mm: tuple[float, float], pages: int = 2) -> list[QImage]:
    """The report as its PDF lays it out (the text area of its pages, at 96 dpi), page by page."""
    document = QTextDocument()
    document.setHtml(html)
    size = QSizeF(area_mm[0] / 25.4 * 96, area_mm[1] / 25.4 * 96)
    document.setPageSize(size)
    images = []
    for number in range(min(pages, document.pageCount())):
        image = QImage(int(size.width()), int(size.height()), QImage.Format.Format_RGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.translate(0, -number * size.height())
        document.drawContents(painter, painter.clipBoundingRect().translated(0, number * size.height()))
        painter.end()
        images.append(image)
    return images


def test_the_report_for_auditors(qapp, qloop, story_window, tmp_path):
    w = story_window
    page, controller = w.access.page, w.access.controller
    target = tmp_path / "out" / "acme-access.pdf"
    target.parent.mkdir()

    async def scenario() -> tuple[Diff, object]:
        await _answer(controller, w.show_access)
        page.until_now.setChecked(False)
        _moment(page.since, BEFORE)
        _moment(page.until, AFTER)
        diff = await _answer(
            controller,
            lambda: page.mode.setCurrentIndex(CHANGES),
            lambda a: isinstance(a, Diff) and (a.from_ms, a.to_ms) == (_ms(BEFORE), _ms(AFTER)),
        )
        written = signal_future(w.access.exporter.finished)
        w.access.exporter.start(controller.shown, controller.current_filter(), target)
        return diff, (await written)[0]

    diff, files = run_async(qloop, scenario())
    assert files == (target, target.with_suffix(".csv"))
    pdf = target.read_bytes()
    assert (
        pdf.startswith(b"%PDF-")
        and b"/Title (\xfe\xff" in pdf
        and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page\r") + pdf.count(b"/Type /Page ") >= 1
        and b"/MediaBox [0 0 842" in pdf  # A4 landscape: the changes' five columns keep addresses whole
    )
    with target.with_suffix(".csv").open(encoding="utf-8") as sheet:
        rows = list(csv.DictReader(sheet))
    assert len(rows) == len(diff.changes) and {r["from"] for r in rows} == {iso(BEFORE)}
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "access-report.pdf").write_bytes(pdf)  # the file itself, to open beside the pictures
    html = report_html(controller.shown, AccessFilter())
    images = _page_images(html, text_area_mm(controller.shown))
    for number, image in enumerate(images, 1):
        assert image.save(str(SCREENSHOTS / f"access-report-page{number}.png"))
    document = QTextDocument()
    document.setHtml(html)
    text = document.toPlainText()
    assert "Access review — acme" in text
    assert "History complete from 2026-11-01 12:00:00 UTC (the first stored event)" in text
    assert (
        "Possible gap: events from 2026-11-01 12:01:30 UTC to 2026-11-01 12:01:40 UTC may be missing" in text
    )
    assert "grace@example.com lost role admin in organization Stark Industries" in text
    assert not list(target.parent.glob(".*"))  # no temporary file left behind


def test_a_history_that_cannot_be_read_is_said_in_the_view(qapp, qloop, story_window, tmp_path):
    """A damaged file is one sentence in the view naming it, not a crash report."""
    import sqlite3

    conn = sqlite3.connect(tmp_path / "acme.sqlite3")
    conn.execute("DROP TABLE access_spans")  # what a damaged or foreign file looks like to the reader
    conn.commit()
    conn.close()
    w = story_window
    page = w.access.page

    async def scenario() -> None:
        w.show_access()
        await until(lambda: page.body.currentWidget() is page.not_known and page.unknown.text())

    run_async(qloop, scenario())
    assert page.unknown.text().startswith("The access history of acme cannot be read: the event database ")
    assert "is damaged (no such table: access_spans)" in page.unknown.text() and not page.to_first.isVisible()


def test_following_now_keeps_the_tree_as_the_user_left_it(qapp, qloop, story_window, tmp_path):
    """New events while the view shows now: the answer grows, the rows the user closed or opened stay so, and the
    counts do not blink "Reading…"."""
    from helpers.access_story import ADA, STARK, at
    from helpers.entity_events import envelope_row
    from tenant_events.store import Batch, StoreWriter

    w = story_window
    page, controller, model, tree = (
        w.access.page,
        w.access.controller,
        w.access.page.snapshot_model,
        w.access.page.tree,
    )

    async def scenario() -> None:
        before = await _answer(controller, w.show_access)
        users = {g.user.id for g in before.grants if g.user is not None}
        tree.setExpanded(model.index(0, 0), False)  # Organizations closed
        tree.setExpanded(model.index(1, 0), False)  # Groups closed; Users stays open
        joined = envelope_row(
            "organization.member.added",
            {"object": {"organization": {"id": STARK, "name": "stark"}, "user": {"user_id": ADA}}},
            at(300),
            800_000_300,
        )
        writer = StoreWriter(tmp_path / "acme.sqlite3")
        try:
            writer.commit_sync(Batch(events=[joined], cursor="c3"))
        finally:
            writer.close()
        answer = await _answer(
            controller,
            lambda: controller.events_stored("acme"),
            lambda a: any(g.user is not None and g.user.id == ADA for g in a.grants),
        )
        assert answer.at_ms is None and len(answer.grants) == len(before.grants) + 1
        assert not tree.isExpanded(model.index(0, 0)) and not tree.isExpanded(model.index(1, 0))
        assert tree.isExpanded(model.index(2, 0)) and model.index(2, 0).data() == f"Users ({len(users) + 1})"
        assert page.counts.text().startswith(f"{len(answer.grants):,} grants")

    run_async(qloop, scenario())


def test_a_tenant_taken_away_lets_go_of_its_history(qapp, qloop, story_window, tmp_path):
    """Its reader is closed at the next answer, so the file is not held open by a tenant the window left."""
    from tenant_events.store import EventReader
    from tenant_events.view.tenant_reader import TenantReader

    w = story_window
    page, controller = w.access.page, w.access.controller
    other = tmp_path / "globex.sqlite3"
    write_story(other)
    readers = [EventReader(other), EventReader(other)]
    w.add_tenant("globex", TenantReader(readers[0]), TenantReader(readers[1]))

    async def scenario() -> None:
        await _answer(controller, w.show_access)
        await _answer(controller, lambda: page.tenant_box.setCurrentText("globex"))
        assert set(controller._readers) == {"acme", "globex"}
        w.remove_tenant("globex")
        await _answer(controller, controller.page_shown)
        assert set(controller._readers) == {"acme"}

    try:
        run_async(qloop, scenario())
    finally:
        for reader in readers:
            reader.close()


def test_a_report_never_replaces_a_file_of_another_kind(qapp, tmp_path):
    """A name typed over the dialog's suffix — the tenant's own database, picked by mistake — gets .html added;
    the file picked is left as it was."""
    database = tmp_path / "acme.sqlite3"
    write_story(database)
    before = database.read_bytes()
    with AccessReader(database) as reader:
        answer = AccessReview("acme", reader).at(_ms(AFTER))
    written = write_report(answer, AccessFilter(), database)
    assert written == (tmp_path / "acme.sqlite3.html", tmp_path / "acme.sqlite3.csv")
    assert database.read_bytes() == before
    assert "Access review — acme" in written[0].read_text(encoding="utf-8")
    assert write_report(answer, AccessFilter(), tmp_path / "r.HTML") == (
        tmp_path / "r.HTML",
        tmp_path / "r.csv",
    )
