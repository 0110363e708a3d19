"""Names, not raw ids, where a person reads an alert: the inbox's list of the events behind it and the detail
pane's title once one of them is opened in the table say it as the table's Summary does — who, where, as what,
with the directory's names — not the stored one-liner ("Role admin assigned to auth0|… in org_…"). A real
simulator's admin grant, the real directory."""

from __future__ import annotations

import asyncio
import re

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, profile_for, run_async, running_app, until
from helpers.shots import shot
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.entities.sentences import Sentence
from tenant_events.settings import Settings, save_settings
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col

pytestmark = [pytest.mark.gui, pytest.mark.dbus, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
RAW_ID = re.compile(r"auth0\|[0-9a-f]{6}|\borg_[A-Za-z0-9]{6}")
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_inbox_events_and_detail_title_read_with_names(qloop, ui_paths, make_simulator, dunst, theme):
    sim = make_simulator(seed=9, backlog=3000, rate=2.0, heartbeat=0.2)
    save_settings(ui_paths, Settings(theme=theme, alerts=AlertSettings(working_hours=AROUND_THE_CLOCK)))

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            w, alerts = app.window, app.alerts
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            book = alerts.book
            # the backlog may have raised some; routine traffic may grant an admin role of another kind (a
            # group's) meanwhile: the alert wanted is the one that took in a new member grant
            member = "organization.member.role.assigned"
            seen = {e.alert.id: e.alert.type_counts.get(member, 0) for e in book.entries()}

            def grant():
                return next(
                    (
                        e
                        for e in book.entries()
                        if e.alert.rule_id == "admin-role"
                        and e.alert.type_counts.get(member, 0) > seen.get(e.alert.id, 0)
                    ),
                    None,
                )

            await asyncio.to_thread(sim.scenario, "admin_grant", to="member")
            entry = await until(grant, 20, "the admin-role alert")
            # the names come from the directory, which takes a catch-up's rows in behind ingest (the backlog's
            # member may be among them): the inbox says the alert's events once, so it opens once the directory
            # has reached them
            reader = session.ui_reader
            assert reader is not None
            seqs = book.event_seqs("acme", entry.alert.id)
            await until(
                lambda: reader.directory().watermark() >= max(seqs),
                30,
                lambda: f"the directory at {reader.directory().watermark()} of the alert's events {seqs}",
            )
            inbox = alerts.open_inbox("acme", entry.alert.id)
            await until(lambda: inbox.event_list.count() >= 1, 10, "its events")
            # the newest member grant among the alert's events (the list is newest first)
            at = next(i for i, ev in enumerate(reversed(inbox.shown_events)) if ev.type == member)
            line = inbox.event_list.item(at).text()
            newest = inbox.shown_events[-1 - at]
            stored = session.ui_reader.get(newest.seq)
            # stored: "Role admin assigned to auth0|… in org_…"; shown: who, to which organization, as what
            assert stored is not None and RAW_ID.search(stored.summary), stored
            assert " added to organization " in line and line.endswith(" as admin"), line
            assert not RAW_ID.search(line), line  # who and where by name, not by id
            inbox.resize(1400, 700)
            shot(inbox, f"inbox-names-{theme}")

            # double-click the event: the table opens it, and the detail pane's title says it with names
            inbox.event_list.itemActivated.emit(inbox.event_list.item(at))
            await until(lambda: w.detail.shown is not None, 10, "the event in the detail pane")
            said = line.split("   ")[-1]
            who = said.split(" added to organization ")[0]
            # (the directory names an event once the store's indexer has read it, which may be a moment after the
            # rules named it in the inbox: the title reads the new names when they come)
            named = f"organization.member.role.assigned — {who} added to organization "
            await until(
                lambda: (
                    w.detail.title.toolTip().startswith(named) and " as admin" in w.detail.title.toolTip()
                ),
                10,
                "the title with names",
            )
            # the same sentence as the table's Summary for that row: one naming wherever a person reads (live
            # traffic may have renamed the organization since the inbox drew its line: both read the name now)
            row = w.table.currentIndex().row()
            assert w.model.event_at(row).seq == newest.seq  # type: ignore[union-attr]
            await until(
                lambda: w.detail.title.toolTip().endswith(
                    " — " + str(w.model.index(row, Col.SUMMARY).data())
                ),
                10,
                "the table's sentence",
            )
            w.resize(1600, 900)
            shot(w, f"detail-title-names-{theme}")
            # and the alert's events in the table: the chip names the alert
            # the alert's events before the table asks for them (live traffic may fold in more at any time, and
            # an event folded in after the query ran is not in its rows even when it is older than the table's head)
            before = set(book.event_seqs("acme", entry.alert.id))
            inbox.table_button.click()
            chip = w.filter_bar.alert_chip
            await until(
                lambda: (
                    chip.isVisible()
                    and w.model.event_filter.query == f"alert:{entry.alert.id}"
                    and not w.first_page.busy
                    and not w.model.counting
                ),
                10,
                "the alert's rows",
            )
            assert chip.text().startswith("alert: Admin role assigned")
            after = set(book.event_seqs("acme", entry.alert.id))
            shown = {w.model.event_at(r).seq for r in range(w.model.rowCount())}  # type: ignore[union-attr]
            # exactly the alert's events up to what the table has read (live traffic may fold in more since)
            assert shown <= after and all(seq > w.model.head for seq in before - shown), (
                shown,
                before,
                after,
            )
            # a query's first page (read on a worker) gets its names like any page the table reads
            await until(
                lambda: all(
                    isinstance(w.model.index(r, Col.SUMMARY).data(SENTENCE_ROLE), Sentence)
                    for r in range(w.model.rowCount())
                ),
                10,
                "every row named",
            )
            await until(lambda: "Searching" not in w.filter_bar.count_label.text(), 10, "the count")
            shot(w, f"alert-chip-{theme}")
            inbox.close()

    run_async(qloop, scenario(), timeout=150)
    for v in _visits:
        v.cancel()


def test_the_detail_title_names_what_the_directory_knows(qtbot, open_window, tmp_path):
    from helpers.entity_stores import write_store

    path = tmp_path / "acme.sqlite3"
    write_store(path, 300, seed=11)
    w = open_window(path)

    def named(r: int) -> Sentence | None:
        s = w.model.index(r, Col.SUMMARY).data(SENTENCE_ROLE)
        return s if isinstance(s, Sentence) and any(m.label != m.id for m in s.mentions) else None

    row = next(
        r for r in range(w.model.rowCount()) if named(r) and w.model.event_at(r).summary != named(r).text
    )
    sentence = named(row)
    w.table.selectRow(row)
    qtbot.waitUntil(lambda: w.detail.shown is not None)
    title = w.detail.title.toolTip()
    assert title.endswith(f" — {sentence.text}"), (title, sentence.text)
    for m in sentence.mentions:
        if m.label != m.id:
            assert m.id not in title  # the raw id is in the names line's links and tooltips, not the title


def test_the_detail_title_takes_the_names_that_come_after_its_row_was_read(qloop, open_window, tmp_path):
    """An event opened while the directory is behind (a catch-up's rows, which the indexer takes in after ingest) is
    titled with its ids at first; once the directory has reached it, the title says the names the table's row
    says, without the event being opened again."""
    from helpers.entity_events import Tenant
    from tenant_events.store import Batch, StoreWriter

    t = Tenant()
    grace, stark = "auth0|3de8f2ea3c49aa", "org_0000000000stark"
    rows = [
        t.row("user.created", t.user(grace, "grace.hopper@example.com", "Grace Hopper")),
        t.row("organization.created", t.org(stark, "stark", "Stark Industries")),
    ]
    member = {"organization": {"id": stark}, "user": {"user_id": grace}}
    rows += [t.row("organization.member.added", member) for _ in range(60)]  # more than a live batch
    path = tmp_path / "acme.sqlite3"
    writer = StoreWriter(path)
    writer.commit_sync(Batch(events=rows, cursor="backlog"))
    writer.close()  # before its idle-time indexing: the directory has not reached the batch
    w = open_window(path)

    def index() -> None:
        indexer = StoreWriter(path)
        try:
            indexer.index_all_sync()  # the directory comes up to the batch
        finally:
            indexer.close()

    async def scenario() -> None:
        w.table.selectRow(0)
        await until(lambda: w.detail.shown is not None, 10, "the event in the detail pane")
        await until(
            lambda: isinstance(w.model.index(0, Col.SUMMARY).data(SENTENCE_ROLE), Sentence),
            10,
            "the row's first sentence",
        )
        assert grace in w.detail.title.toolTip()  # said with the ids it carries, for now
        await asyncio.to_thread(index)
        named = "organization.member.added — grace.hopper@example.com added to organization Stark Industries"
        await until(
            lambda: w.detail.title.toolTip() == named,
            10,
            lambda: f"the title with names, not {w.detail.title.toolTip()!r}",
        )
        newest = w.model.event_at(0)
        assert newest is not None and w.detail.shown is not None and w.detail.shown.seq == newest.seq

    run_async(qloop, scenario(), timeout=120)
