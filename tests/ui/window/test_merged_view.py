""" "All tenants": one table over three real stores filled from the simulator's tenant generator, in event-time order
across stores, with filters and search, live arrivals on top, each tenant's own colour, and the detail pane."""

from __future__ import annotations

import threading

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from helpers.entity_events import envelope_row, simulated_rows
from helpers.entity_stores import GRACE, GRACE_EMAIL, GRACE_TIMELINE, write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, until
from helpers.painted_rows import row_background
from tenant_events.entities.sentences import Mention
from tenant_events.store import Batch, EventReader, StoreWriter
from tenant_events.tenant.committed_rows import RowRanges
from tenant_events.ui.look.colors import DARK, LIGHT, contrast_ratio, tenant_hex
from tenant_events.ui.look.theme import tenant_color
from tenant_events.ui.window.detail_pane import READING
from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS
from tenant_events.ui.window.table.event_table_model import Col
from tenant_events.ui.window.timeline.timeline_model import TimelineCol
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
TENANTS = ("acme", "globex", "initech")
OTHER_GRACE = "google-oauth2|1815121299"


def _time_ms(row):
    return row.time_ms


@pytest.fixture
def stores(tmp_path):
    """Three stores whose events interleave in time (each generator starts at the same moment)."""
    made = {}
    for k, tenant in enumerate(TENANTS):
        path = tmp_path / f"{tenant}.sqlite3"
        uid = GRACE if tenant == "globex" else OTHER_GRACE  # one person, a user id per tenant
        rows = write_store(path, 800 + 10 * k, seed=21 + k, story=tenant != "acme", at=5000 + 10 * k, uid=uid)
        made[tenant] = (path, rows)
    return made


def _expected(stores, keep=lambda row: True):
    """Every stored row, newest first by (event time, tenant, seq): the order "All tenants" promises."""
    keyed = [
        (row.time_ms, tenant, seq, row.event_id)
        for tenant, (_path, rows) in stores.items()
        for seq, row in enumerate(rows, start=1)
        if keep(row)
    ]
    return [(tenant, event_id) for _ms, tenant, _seq, event_id in sorted(keyed, reverse=True)]


def _shown(model):
    return [(r.tenant, r.event.event_id) for r in model.rows]


@pytest.fixture
def all_tenants_window(open_window, qloop, stores):
    w = open_window(stores["acme"][0], name="acme")
    readers = []
    for tenant in TENANTS[1:]:
        pair = EventReader(stores[tenant][0]), EventReader(stores[tenant][0])
        readers += pair
        w.add_tenant(tenant, TenantReader(pair[0]), TenantReader(pair[1]))
    yield w
    run_async(qloop, w.shutdown())
    for reader in readers:
        reader.close()


def test_all_tenants_shows_every_store_in_event_time_order_with_filters_and_search(
    all_tenants_window, qloop, stores
):
    w = all_tenants_window
    box = w.filter_bar.tenant_box
    assert [box.itemText(i) for i in range(box.count())] == [ALL_TENANTS, *TENANTS]
    box.setCurrentText(ALL_TENANTS)
    all_tenants = w.entities.all_tenants
    model = all_tenants.model
    run_async(qloop, until(lambda: model.rowCount() == 200))
    assert w.entities.all_tenants.stack.currentWidget() is all_tenants.view
    expected = _expected(stores)
    assert _shown(model) == expected[:200]
    assert {t for t, _ in _shown(model)} == set(TENANTS)  # they really interleave
    # scrolling reads the next page from where the last one ended
    model.fetchMore()
    run_async(qloop, until(lambda: model.rowCount() == 400))
    assert _shown(model) == expected[:400]
    run_async(qloop, until(lambda: w.filter_bar.count_label.text() == f"{len(expected):,} events"))
    assert sum(sum(b.values()) for _s, b in w.histogram.buckets) == len(expected)
    # the same filter bar: a type
    w.filter_bar.set_types({"user.created"})
    wanted = _expected(stores, lambda row: row.type == "user.created")
    run_async(qloop, until(lambda: _shown(model) == wanted[:200]))
    run_async(qloop, until(lambda: w.filter_bar.count_label.text() == f"{len(wanted):,} events"))
    # the query line's field terms too
    w.filter_bar.clear_types()
    w.filter_bar.search.setText("type:user.created")
    w.filter_bar.search.returnPressed.emit()
    run_async(qloop, until(lambda: w.filter_bar.count_label.text() == f"{len(wanted):,} events"))
    assert _shown(model) == wanted[:200]
    # and search: Grace's raw id in globex finds her events there, with her name in the Summary
    w.filter_bar.clear_types()
    w.filter_bar.search.setText(GRACE.split("|")[1])
    w.filter_bar.search.returnPressed.emit()
    run_async(qloop, until(lambda: model.rowCount() == 5 and {t for t, _ in _shown(model)} == {"globex"}))
    assert model.index(0, Col.SUMMARY).data() == f"user {GRACE_EMAIL} updated"
    assert GRACE in model.index(0, Col.SUMMARY).data(Qt.ItemDataRole.ToolTipRole)
    # her name opens one timeline over both tenants where her address is a user (another id in initech), newest
    # first (initech's story is ten seconds later)
    w.entities.timelines.open_mention("globex", Mention("user", GRACE, GRACE_EMAIL))
    pane = w.entities.timelines.pane
    run_async(qloop, until(lambda: pane.model.rowCount() == 2 * len(GRACE_TIMELINE)))
    got = [(r.tenant, r.event.type, r.sentence.text) for r in pane.model.rows]
    assert got == [("initech", *e) for e in GRACE_TIMELINE] + [("globex", *e) for e in GRACE_TIMELINE]
    assert pane.title.text() == f"Timeline of user {GRACE_EMAIL}"
    assert not pane.table.isColumnHidden(TimelineCol.TENANT)
    run_async(qloop, until(lambda: "initech: user" in pane.state.toPlainText()))
    assert OTHER_GRACE in pane.state.toPlainText() and GRACE in pane.state.toPlainText()


def _arrive(w, stores, count):
    """`count` events stored in initech, newer than anything stored (1 day later), and said to the window."""
    later, _ = simulated_rows(1000 + count, seed=99)
    shifted = []
    for k, r in enumerate(later[1000:]):
        data = orjson.loads(r.raw)
        data["event"]["time"] = f"2026-11-02T12:00:{k:02d}.000Z"
        data["event"]["id"] = f"evt_live_{k}"
        shifted.append(envelope_row(r.type, data["event"]["data"], data["event"]["time"], 800_000 + k))
    writer = StoreWriter(stores["initech"][0])
    committed = RowRanges("initech").advance(writer.commit_sync(Batch(events=shifted, cursor="live")))
    writer.close()
    assert committed is not None
    w.events_stored(committed)  # what the tenant link hands the window
    return shifted


def test_live_events_go_on_top_and_a_row_opens_in_the_detail_pane(all_tenants_window, qloop, stores):
    w = all_tenants_window
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    model = w.entities.all_tenants.model
    run_async(qloop, until(lambda: model.rowCount() == 200))
    shifted = _arrive(w, stores, 10)
    run_async(qloop, until(lambda: model.rowCount() == 210))
    assert [(r.tenant, r.event.event_id) for r in model.rows[:10]] == [
        ("initech", row.event_id) for row in reversed(shifted)
    ]
    all_tenants_view = w.entities.all_tenants.view
    all_tenants_view.setCurrentIndex(model.index(12, Col.TYPE))
    row = model.rows[12]
    assert w.detail.shown is not None and w.detail.shown.event_id == row.event.event_id
    assert w.detail.shown.raw is not None
    # picking one tenant again brings its own table back
    w.filter_bar.tenant_box.setCurrentText("globex")
    assert w.tenant == "globex" and w.entities.all_tenants.stack.currentWidget() is w.table
    # back to all, then a tenant goes: the view follows the stores left, and leaves with one left
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    run_async(qloop, until(lambda: model.rowCount() == 200))
    w.remove_tenant("initech")
    run_async(
        qloop, until(lambda: model.rowCount() == 200 and {r.tenant for r in model.rows} <= {"acme", "globex"})
    )
    w.remove_tenant("globex")
    run_async(qloop, until(lambda: w.tenant == "acme"))
    view = w.entities.all_tenants
    assert view.stack.currentWidget() is w.table and not view.active
    # left, the view reads nothing more: its live and count timers read every tenant for a view not shown
    assert not view._live.isActive() and not view._counts.isActive()


def test_each_row_of_all_tenants_keeps_its_stripe_while_events_arrive_on_top(
    all_tenants_window, qloop, stores
):
    """An odd number of events put on top must not flip the stripe of every row below them."""
    w = all_tenants_window
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    model, view = w.entities.all_tenants.model, w.entities.all_tenants.view
    run_async(qloop, until(lambda: model.rowCount() == 200))
    before = [row_background(view, row) for row in (10, 11)]
    assert before[0] != before[1]  # the rows are striped
    _arrive(w, stores, 9)
    run_async(qloop, until(lambda: model.rowCount() == 209))
    assert [row_background(view, row + 9) for row in (10, 11)] == before


def test_a_timer_firing_while_no_loop_runs_leaves_no_error(all_tenants_window, qloop):
    """Qt runs its timers whenever its events are processed, also between two runs of the loop (a test's end and
    its clean-up; the app's last round of events at quit): the live rows' read then finds no loop to run on, and
    is given up as a cancelled one, with no error left on the loop (the loop's fixture fails the test on one)."""
    w = all_tenants_window
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    view = w.entities.all_tenants
    run_async(qloop, until(lambda: view.model.rowCount() == 200))
    before = set(w._tasks)
    view._live.timeout.emit()  # as the timer fires, no loop running
    for _ in range(20):
        QApplication.processEvents()
    started = [t for t in w._tasks if t not in before]
    assert view.model.rowCount() == 200 and all(t.done() for t in started)


def test_a_timer_firing_after_the_window_shut_down_reads_nothing(all_tenants_window, qloop):
    """As the app quits, a timer of the view that fired in the last round of Qt events (the app's loop stopped)
    made a task that found no running loop: once the window has shut down, the view spawns nothing."""
    w = all_tenants_window
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    model, view = w.entities.all_tenants.model, w.entities.all_tenants
    run_async(qloop, until(lambda: model.rowCount() == 200))
    run_async(qloop, w.shutdown())
    assert not view._live.isActive() and not view._counts.isActive()
    before = len(w._tasks)
    view._live.timeout.emit()
    view._counts.timeout.emit()
    assert len(w._tasks) == before and view.pages is None


@pytest.mark.parametrize("dark", [False, True])
def test_each_tenant_has_its_own_colour_readable_in_both_themes(all_tenants_window, qloop, dark):
    w = all_tenants_window
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    model = w.entities.all_tenants.model
    run_async(qloop, until(lambda: model.rowCount() == 200))
    colours = {tenant_hex(t, dark) for t in TENANTS}
    assert len(colours) == 3  # told apart, whatever their names hash to
    for colour in colours:
        for background in ("Base", "AlternateBase"):
            palette = DARK if dark else LIGHT
            assert contrast_ratio(colour, palette[background]) >= 4.5
    for r in range(20):
        row = model.rows[r]
        chip = model.index(r, Col.TENANT).data(Qt.ItemDataRole.DecorationRole)
        assert QColor(chip.toImage().pixelColor(2, 2)) == tenant_color(row.tenant)
        assert model.index(r, Col.TENANT).data() == row.tenant
        assert model.index(r, Col.TENANT).data(Qt.ItemDataRole.ForegroundRole) == tenant_color(row.tenant)


def test_tenant_colours_stay_apart_and_stay_put():
    from tenant_events.ui.look.colors import TENANT_COLORS, assign_tenant_colors

    names = [f"tenant-{k}" for k in range(len(TENANT_COLORS))]
    first = assign_tenant_colors(names)
    assert sorted(first.values()) == list(range(len(TENANT_COLORS)))  # every colour once, whatever the hashes
    later = assign_tenant_colors([*names, "one-more"])
    assert {n: later[n] for n in names} == first  # a tenant added later moves none of the others
    assert assign_tenant_colors(names) == first  # the same every time


class HeldGets:
    """Every event read of the real stores, with its thread; off the UI thread, reads of `held` seqs wait while
    `go` is clear (a slow archive read, at will). A read on the UI thread never waits: the test fails, not hangs."""

    def __init__(self, monkeypatch) -> None:
        self.threads: list[threading.Thread] = []
        self.held: set[int] = set()
        self.go = threading.Event()
        self.go.set()
        real = EventReader.get

        def get(reader, seq):
            self.threads.append(threading.current_thread())
            if seq in self.held and threading.current_thread() is not threading.main_thread():
                assert self.go.wait(120), "the test never let the read go on"
            return real(reader, seq)

        monkeypatch.setattr(EventReader, "get", get)


def _detail_reads(w):
    return [t for t in w.feed.tasks if t.get_coro().__qualname__.endswith("_read_detail")]


def _view_stores(w):
    pages = w.entities.all_tenants.pages
    return {} if pages is None else pages.stores


def _choose(view, r):
    view.setCurrentIndex(view.model().index(r, Col.TYPE))
    return view.model().rows[r]


def _shows_title_only(w, chosen):
    """The pane on a chosen row whose event is still being read: its title, nothing of the event before."""
    detail = w.detail
    assert detail.shown is not None and detail.shown.seq == chosen.event.seq
    assert chosen.event.type in detail.title.toolTip()
    assert detail.pretty == "" and detail.link.text() == "" and not detail.copy_button.isEnabled()


def test_a_row_of_all_tenants_is_read_off_the_ui_thread(all_tenants_window, qloop, monkeypatch):
    """Choosing a row reads its event (from a year's archive, 0.1-0.5 s) and an update's earlier state on a read
    thread, as the tenant's own table does; meanwhile the pane shows the row's title and nothing of the event
    before, saying it reads once that takes a moment. The row chosen stays where it is."""
    w = all_tenants_window
    gets = HeldGets(monkeypatch)
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    view = w.entities.all_tenants.view
    model = view.model()

    async def scenario():
        await until(lambda: model.rowCount() == 200)
        first = _choose(view, 3)
        await until(lambda: w.detail.pretty, 20, "the first row's JSON")
        assert orjson.loads(w.detail.pretty)["event"]["id"] == first.event.event_id
        gets.threads.clear()
        chosen = model.rows[12]
        gets.held.add(chosen.event.seq)
        gets.go.clear()
        _choose(view, 12)
        _shows_title_only(w, chosen)
        await until(
            lambda: w.detail.browser.toPlainText() == READING, 20, "the pane saying it reads the event"
        )
        _shows_title_only(w, chosen)
        assert view.currentIndex().row() == 12
        gets.go.set()
        await until(lambda: w.detail.pretty, 20, "the chosen row's JSON")
        assert orjson.loads(w.detail.pretty)["event"]["id"] == chosen.event.event_id
        assert w.detail.copy_button.isEnabled() and view.currentIndex().row() == 12
        assert gets.threads and threading.main_thread() not in gets.threads
        # an update compared with the earlier state of its object, looked up off the UI thread too
        w.filter_bar.search.setText(GRACE.split("|")[1])
        w.filter_bar.search.returnPressed.emit()
        await until(lambda: model.rowCount() == 5 and {r.tenant for r in model.rows} == {"globex"})
        gets.threads.clear()
        w.events.domains["globex"] = "globex.eu.auth0.com"  # its row's dashboard link: its own tenant's
        update = _choose(view, 0)
        assert update.event.type.endswith(".updated") and w.detail.pretty == ""
        await until(lambda: w.detail.pretty, 20, "the update's JSON")
        assert "Changed since the earlier event" in w.detail.browser.toPlainText()
        assert "/eu/globex/" in w.detail.link.text()
        assert gets.threads and threading.main_thread() not in gets.threads

    run_async(qloop, scenario())


def test_a_late_answer_in_all_tenants_is_dropped(all_tenants_window, qloop, monkeypatch):
    """A row's read that answers after the user chose another row, left the view, or the tenants changed is not
    shown over their choice (and a store closed under it is no error)."""
    w = all_tenants_window
    gets = HeldGets(monkeypatch)
    w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
    view = w.entities.all_tenants.view
    model = view.model()

    async def late(r, then, shown):
        """Row `r` chosen with its read held, `then()` done, the read let go: the pane is left as `shown()`."""
        await until(lambda: model.rowCount() == 200 and not _detail_reads(w))
        gets.go.clear()
        slow = model.rows[r]
        gets.held.add(slow.event.seq)
        _choose(view, r)
        reads = _detail_reads(w)
        assert reads and w.detail.pretty == "", "the row was read on the UI thread"
        then()
        await until(shown, 20, "the pane after the user's next choice")
        gets.go.set()
        await until(lambda: all(t.done() for t in reads), 20, "the slow read's end")
        gets.held.clear()
        assert shown() and (
            w.detail.shown is None or w.detail.shown.seq != slow.event.seq or not w.detail.pretty
        )

    async def scenario():
        # another row chosen: its JSON stays
        await late(
            5,
            lambda: _choose(view, 7),
            lambda: w.detail.pretty and w.detail.shown.seq == model.rows[7].event.seq,
        )
        # the view left for one tenant's table
        await late(9, lambda: w.filter_bar.tenant_box.setCurrentText("globex"), lambda: w.tenant == "globex")
        assert w.detail.shown is None
        # back, then the tenants change (the view's stores are closed and opened again)
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        await until(lambda: w.entities.all_tenants.active)
        acme = next(r for r, row in enumerate(model.rows) if row.tenant == "acme")
        await late(acme, lambda: w.remove_tenant("initech"), lambda: "initech" not in _view_stores(w))
        await until(lambda: model.rowCount() == 200 and {r.tenant for r in model.rows} <= {"acme", "globex"})
        assert w.detail.pretty == ""

    run_async(qloop, scenario())
