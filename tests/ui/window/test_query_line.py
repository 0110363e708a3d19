"""The query line in the window: queries filter the table through the store; a query that cannot run keeps
the last good filter, gets a red wavy underline under the wrong part and its reason beside the line."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, signal_future
from helpers.query_model import simulated_rows, write
from helpers.shots import shot
from tenant_events.query import parse
from tenant_events.store import EventFilter, EventReader
from tenant_events.ui.look.colors import DARK
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.main_window import MainWindow
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture
def bar(qtbot, qapp):
    apply_theme(qapp, "light")
    bar = FilterBar()
    qtbot.addWidget(bar)
    bar.resize(1400, 40)
    bar.show()
    qtbot.waitExposed(bar)
    yield bar
    apply_theme(qapp, "light")


def red_columns(bar: FilterBar) -> set[int]:
    """x positions (in the line edit) of clearly red pixels below the text's middle: the wavy underline (the
    span's pale tint and the black or white text are not this red)."""
    image = bar.search.grab().toImage()
    found = set()
    for y in range(image.height() // 2, image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if c.red() > 120 and c.red() - c.green() > 50 and c.red() - c.blue() > 40:
                found.add(x)
    return found


def x_at(bar: FilterBar, position: int) -> int:
    keep = bar.search.cursorPosition()
    bar.search.setCursorPosition(position)
    x = bar.search.cursorRect().center().x()
    bar.search.setCursorPosition(keep)
    return x


def test_a_good_query_becomes_the_filter(qtbot, bar):
    with qtbot.waitSignal(bar.filter_changed, timeout=2000):
        qtbot.keyClicks(bar.search, "type:organization.* -purpose:test")
    assert bar.current().query == "type:organization.* -purpose:test"
    assert bar.current().text == ""
    assert not bar.query_problem.isVisible() and not red_columns(bar)


def test_a_bad_query_is_underlined_with_its_reason_beside_it(qtbot, bar):
    bar.search.setText("type:user.deleted")
    bar.search.returnPressed.emit()
    good = bar.current()
    bar.search.clear()
    with qtbot.assertNotEmitted(bar.filter_changed, wait=400):
        qtbot.keyClicks(bar.search, "alice usr:ada type:user.deleted")
    qtbot.waitUntil(bar.query_problem.isVisible, timeout=2000)
    assert (
        bar.query_problem.text()
        == "unknown field 'usr' — did you mean user? (fields: type, family, user, email, org, group, role, connection, ip, client, purpose, id, tenant, alert, source)"
    )
    assert bar.search.accessibleDescription() == bar.query_problem.text()
    assert bar.current() == good  # the table keeps showing the last query that could run
    red = red_columns(bar)
    start, end = x_at(bar, 6), x_at(bar, 9)  # "usr"
    assert red and min(red) >= start - 3 and max(red) <= end + 3, (sorted(red), start, end)
    assert len(red) >= (end - start) * 0.8  # a line along the whole word, not a speck
    save_screenshot(bar, "query-line-error-light")
    # fixing it removes the underline and the reason and runs the query
    bar.search.setCursorPosition(9)  # after "usr"
    with qtbot.waitSignal(bar.filter_changed, timeout=2000):
        qtbot.keyClick(bar.search, Qt.Key.Key_Backspace)
        qtbot.keyClicks(bar.search, "er")
    assert bar.search.text() == "alice user:ada type:user.deleted"
    assert not bar.query_problem.isVisible() and not red_columns(bar)
    assert bar.current().query == "alice user:ada type:user.deleted"


@pytest.mark.parametrize(
    ("query", "underlined"),
    [("type:user.delted", "user.delted"), ('a "open', '"open'), ("a OR", "OR"), ("user:", "user:")],
)
def test_each_kind_of_error_is_underlined_where_it_is(qtbot, bar, query, underlined):
    bar.search.setText(query)
    bar.search.returnPressed.emit()  # Enter shows the problem at once
    assert bar.query_problem.isVisible()
    error = bar.search.error
    assert error is not None and query[error.start : error.end] == underlined
    red = red_columns(bar)
    assert red and min(red) >= x_at(bar, error.start) - 3 and max(red) <= x_at(bar, error.end) + 3


@pytest.mark.parametrize(
    ("query", "first_bad", "reason"),
    [
        ("(" * 400 + "x" + ")" * 400, 20, "at most 20 deep"),
        (" ".join(["user:ada"] * 150), 900, "at most 100 terms"),  # 900: where the 101st term starts
        ("-" * 400 + "x", 20, "at most 20 deep"),
    ],
)
def test_a_query_past_its_limits_is_a_reason_beside_the_line_not_a_crash(
    qtbot, bar, query, first_bad, reason
):
    # 1,000 terms or 400 nested parentheses used to reach SQLite ("Expression tree is too large") or blow the
    # parser's stack (RecursionError); now the window says which limit, and underlines from where it is passed.
    good = bar.current()
    bar.search.setText(query)
    bar.search.returnPressed.emit()
    assert bar.query_problem.isVisible() and reason in bar.query_problem.text()
    error = bar.search.error
    assert error is not None and (error.start, error.end) == (first_bad, len(query))
    assert bar.current() == good  # nothing ran


def test_the_underline_in_the_dark_theme(qtbot, qapp, bar):
    apply_theme(qapp, "dark")
    qtbot.waitUntil(lambda: bar.search.palette().color(QPalette.ColorRole.Base).name() == DARK["Base"])
    bar.search.setText("org:acme emial:x")
    bar.search.returnPressed.emit()
    qtbot.waitUntil(lambda: bool(red_columns(bar)), timeout=2000)
    assert (
        bar.query_problem.text()
        == "unknown field 'emial' — did you mean email? (fields: type, family, user, email, org, group, role, connection, ip, client, purpose, id, tenant, alert, source)"
    )
    image = bar.search.grab().toImage()
    assert image.pixelColor(image.width() - 30, image.height() // 2).lightness() < 80  # drawn dark
    save_screenshot(bar, "query-line-error-dark")


def test_a_saved_filter_with_a_bad_query_shows_the_problem(bar):
    bar.apply_state({"types": [], "text": "usr:x", "range": 0, "test": True})
    assert bar.query_problem.isVisible() and "did you mean user?" in bar.query_problem.text()


def test_the_window_runs_the_query_in_the_store(qtbot, qloop, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(1500))
    reader, stats = EventReader(path), EventReader(path)
    w = MainWindow(str(tmp_path / "window.ini"))
    qtbot.addWidget(w)
    w.show()

    async def load() -> None:
        updated = signal_future(w.aggregates_updated)
        w.add_tenant("acme", TenantReader(reader), TenantReader(stats))
        await updated

    async def query(text: str) -> None:
        counted = signal_future(w.aggregates_updated)
        w.filter_bar.search.setText(text)
        w.filter_bar.search.returnPressed.emit()
        await counted

    run_async(qloop, load())
    for text in (
        "type:user.deleted",
        "-type:user.updated user:ada",
        "org:acme OR org:globex",
        '"ada lovelace"',
    ):
        run_async(qloop, query(text))
        want = reader.page_before(EventFilter(query=text), None, 5000)
        assert want, text
        assert w.model.rowCount() == len(want) == reader.count(EventFilter(query=text))
        shown = [w.model.event_at(r).seq for r in range(w.model.rowCount())]  # type: ignore[union-attr]
        assert shown == [e.seq for e in want], text
        assert w.filter_bar.count_label.text().startswith(f"{len(want):,} event")
    node = parse("type:user.deleted")
    assert node is not None
    run_async(qloop, query("type:user.deleted"))
    assert {w.model.event_at(r).type for r in range(w.model.rowCount())} == {"user.deleted"}  # type: ignore[union-attr]
    # a bad query leaves the table as it was
    rows = w.model.rowCount()
    w.filter_bar.search.setText("type:user.deleted usr:ada")
    w.filter_bar.search.returnPressed.emit()
    assert w.model.rowCount() == rows and w.filter_bar.query_problem.isVisible()
    save_screenshot(w, "main-window-query-error")
    run_async(qloop, w.shutdown())
    reader.close()
    stats.close()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_query_that_cannot_run_says_so_in_the_count(qtbot, qapp, bar, theme):
    apply_theme(qapp, theme)
    base = DARK["Base"] if theme == "dark" else "#ffffff"
    qtbot.waitUntil(lambda: bar.search.palette().color(QPalette.ColorRole.Base).name() == base)
    bar.search.setText("type:user.deleted")
    bar.search.returnPressed.emit()
    bar.set_counts(1_234, {})
    assert bar.count_label.text() == "1,234 events"
    bar.search.setText("type:user.deleted usr:ada")
    bar.search.returnPressed.emit()
    # the table keeps the last good result, and the count no longer passes for the bad query's
    assert bar.current().query == "type:user.deleted"
    assert bar.count_label.text() == "1,234 events · query not run"
    assert "type:user.deleted" in bar.count_label.toolTip()
    # the reason lists every field a query can name
    assert "(fields: type, family, user, email," in bar.query_problem.text()
    bar.resize(1600, bar.sizeHint().height())
    shot(bar, f"query-not-run-{theme}")
    bar.search.setText("type:user.deleted user:ada")
    bar.search.returnPressed.emit()
    bar.set_counts(3, {})
    assert bar.count_label.text() == "3 events" and not bar.query_problem.isVisible()


def test_the_alert_chip_is_per_tenant(qtbot, bar):
    bar.set_tenants(["acme", "globex"], "acme")
    state = {
        "types": [],
        "text": "",
        "range": 0,
        "test": True,
        "alert": {"id": 7, "name": "Mass deletion", "tenant": "acme"},
    }
    bar.apply_state(state)
    assert bar.alert_chip.isVisible() and bar.current().query == "alert:7"
    assert bar.state()["alert"] == {"id": 7, "name": "Mass deletion", "tenant": "acme"}
    assert bar.describe() == "alert: Mass deletion"
    with qtbot.waitSignal(bar.tenant_changed):
        bar.tenant_box.setCurrentText("globex")  # alert 7 of acme means nothing in globex's store
    assert not bar.alert_chip.isVisible() and bar.current().query == ""
    bar.apply_state(state)
    bar.search.setText("type:user.deleted OR type:group.deleted")
    bar.search.returnPressed.emit()
    assert bar.current().query == "alert:7 (type:user.deleted OR type:group.deleted)"
    with qtbot.waitSignal(bar.filter_changed):
        bar.alert_chip.click()  # the chip's ✕
    assert bar.current().query == "type:user.deleted OR type:group.deleted"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_long_query_problem_keeps_the_bar_one_line_and_clips_nothing(
    qapp, qloop, open_window, tmp_path, theme
):
    """The "unknown field" reason lists every field (four lines when it wrapped): in a 1280 px window the bar keeps
    its height, the query line its room, the count ("… · query not run") its whole text; the reason is cut where
    drawn and whole in its tooltip."""
    path = tmp_path / "acme.sqlite3"
    write(path, simulated_rows(200))
    apply_theme(qapp, theme)
    try:
        w = open_window(path, size=(1280, 780))
        bar = w.filter_bar
        height = bar.height()
        bar.search.setText("type:user.deleted usr:ada")
        bar.search.returnPressed.emit()
        qapp.processEvents()
        problem = bar.query_problem
        assert problem.isVisible() and "(fields: type, family, user, email," in problem.text()
        assert problem.toolTip() == problem.text() and problem.elided  # cut where drawn, whole in its tooltip
        assert bar.height() == height  # one line, as before
        assert bar.search.width() >= 340  # the query line keeps the room the problem does not take
        count = bar.count_label
        assert count.text().endswith("query not run")
        assert count.width() >= count.fontMetrics().horizontalAdvance(count.text())  # nothing clipped
        assert count.geometry().right() <= bar.width()
        save_screenshot(w, f"query-problem-one-line-{theme}")
    finally:
        apply_theme(qapp, "light")
