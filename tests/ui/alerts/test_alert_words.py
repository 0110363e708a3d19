"""One event, one sentence, in the real app on the demo tenant with dunst: the alert's message (its notification),
the inbox's event list and the table name an organization as it was called when the event happened, even after
the simulator renamed every organization; an account link says which identity was linked, not "User … updated"."""

from __future__ import annotations

import pytest

from helpers.demo_window import QUIET_DEMO_ARGS, act_out, demo_app, demo_window, pointer_to
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from tenant_events.ui.look.theme import apply_theme
from tenant_events.view import event_text

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def alert_of(app, rule: str):
    return next((e for e in app.alerts.book.entries() if e.alert.rule_name == rule), None)


async def table_sentence(w, seq: int) -> str:
    """The table's summary of one stored event, its page read (and described) anew now."""
    w.model.reload()
    row = w.model.row_of_seq(seq)
    assert row is not None
    w.model.data(w.model.index(row, 2))  # the row drawn: its page is read and described
    await until(lambda: w.model.names.sentence(seq) is not None, 10, "the row's sentence")
    return w.model.names.sentence(seq).text


def name_at(reader, kind: str, entity_id: str, seq: int) -> str:
    """The entity's name as its own events last called it before event `seq`: the name at the event's time. The
    directory's name now may be newer: the demo renames an organization now and then, and on a loaded machine one
    may come between the alert and the test's look."""
    seqs, names = reader.directory().every_name()[(kind, entity_id)]
    return [name for at, name in zip(seqs, names, strict=True) if at < seq and name][-1]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_names_at_the_time_and_what_an_account_link_linked(qapp, qloop, ui_paths, dunst, theme):
    async def scenario() -> None:
        async with demo_app(ui_paths, QUIET_DEMO_ARGS) as app:
            w = await demo_window(app, rows=20)
            apply_theme(qapp, theme)
            await pointer_to(w, None)
            reader = app.sessions["demo"].ui_reader

            # an admin role given to an organization's member: the alert names the organization
            await act_out(app, "admin_grant", to="member")
            await until(lambda: alert_of(app, "Admin role assigned"), 60, "the admin alert")
            entry = alert_of(app, "Admin role assigned")
            seq = entry.alert.last_seq  # the event its words describe: another admin grant may join it since
            org_id = event_text.data_of(reader.get(seq).raw)["object"]["organization"]["id"]
            then = name_at(reader, "organization", org_id, seq)
            assert f"organization {then} as admin" in entry.alert.detail

            # every organization renamed: that event still reads the name it had, everywhere
            before = reader.directory().entity("organization", org_id).label
            await act_out(app, "org_renames")
            await until(
                lambda: reader.directory().entity("organization", org_id).label != before, 30, "the rename"
            )
            now = reader.directory().entity("organization", org_id).label
            inbox = app.alerts.open_inbox(entry.profile, entry.alert.id)
            listed = [inbox.event_list.item(r).text() for r in range(inbox.event_list.count())]
            assert any(f"organization {then} as admin" in line for line in listed), listed
            assert not any(now in line for line in listed)
            assert (
                f"organization {then} as admin"
                in app.alerts.book.get(entry.profile, entry.alert.id).alert.detail
            )
            said = await table_sentence(w, seq)
            assert f"organization {then} as admin" in said and now not in said

            # an account linked to another identity: which one, in the alert, the inbox and the table
            await act_out(app, "account_link", over_s=1)
            await until(lambda: alert_of(app, "Account linked to another identity"), 60, "the link alert")
            linked = alert_of(app, "Account linked to another identity")
            detail = linked.alert.detail
            assert detail.startswith("Identity ") and " linked to user " in detail, detail
            assert "updated" not in detail
            inbox = app.alerts.open_inbox(linked.profile, linked.alert.id)
            assert " linked to user " in inbox.event_list.item(0).text()
            assert detail in inbox.why.text()
            inbox.resize(1000, 640)
            save_screenshot(inbox, f"inbox-account-linked-{theme}")
            link_seq = linked.alert.last_seq
            said = await table_sentence(w, link_seq)
            assert said[:1].upper() + said[1:] == detail

    try:
        run_async(qloop, scenario(), timeout=240)
    finally:
        apply_theme(qapp, "light")
