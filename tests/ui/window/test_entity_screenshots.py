"""A user's timeline and the "All tenants" view in light and dark, 1,600 and 900 px wide: screenshots for people to
look at (artifacts/screenshots/), with the checks that stand for what they look at — names instead of ids, the
timeline's title and state readable, every tenant's colour drawn in the Tenant column."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from helpers.entity_stores import GRACE, GRACE_EMAIL, GRACE_TIMELINE, write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async, save_screenshot, until
from tenant_events.entities.sentences import Mention
from tenant_events.store import EventReader
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col
from tenant_events.view.tenant_reader import TenantReader

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
SIZES = [1600, 900]


@pytest.fixture(autouse=True)
def light_again(qapp):
    yield
    apply_theme(qapp, "light")


@pytest.mark.parametrize("width", SIZES)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_users_timeline(qapp, open_window, qloop, tmp_path, theme, width):
    apply_theme(qapp, theme)
    path = tmp_path / "acme.sqlite3"
    write_store(path, 3000, seed=11, at=1490)
    w = open_window(path, size=(width, 860))
    row = next(r for r in range(50) if w.model.event_at(r).type == "organization.member.role.assigned")
    w.table.setCurrentIndex(w.model.index(row, Col.TYPE))
    run_async(qloop, until(lambda: w.model.index(row, Col.SUMMARY).data(SENTENCE_ROLE) is not None))
    w.entities.timelines.open_mention("acme", Mention("user", GRACE, GRACE_EMAIL))
    pane = w.entities.timelines.pane
    run_async(qloop, until(lambda: pane.model.rowCount() == len(GRACE_TIMELINE)))
    run_async(qloop, until(lambda: "since" in pane.state.toPlainText()))
    qapp.processEvents()
    assert pane.title.text() == f"Timeline of user {GRACE_EMAIL}"
    title = pane.title
    assert title.heightForWidth(title.width()) <= title.height()  # the title is not cut
    assert "member of organization Stark" in pane.state.toPlainText()
    assert GRACE not in w.model.index(row, Col.SUMMARY).data()  # names, not ids
    save_screenshot(w, f"timeline-{theme}-{width}")


@pytest.mark.parametrize("width", SIZES)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_all_tenants(qapp, open_window, qloop, tmp_path, theme, width):
    apply_theme(qapp, theme)
    paths = {}
    for k, tenant in enumerate(("acme", "globex", "initech")):
        paths[tenant] = tmp_path / f"{tenant}.sqlite3"
        write_store(paths[tenant], 1000, seed=31 + k, story=tenant == "globex", at=396, until_s=400)
    w = open_window(paths["acme"], name="acme", size=(width, 860))
    readers = []
    for tenant in ("globex", "initech"):
        pair = EventReader(paths[tenant]), EventReader(paths[tenant])
        readers += pair
        w.add_tenant(tenant, TenantReader(pair[0]), TenantReader(pair[1]))
    try:
        w.filter_bar.tenant_box.setCurrentText(ALL_TENANTS)
        all_tenants = w.entities.all_tenants
        run_async(
            qloop, until(lambda: all_tenants.model.rowCount() == 200 and w.filter_bar.count_label.text())
        )
        all_tenants.view.setCurrentIndex(all_tenants.model.index(3, Col.TYPE))
        qapp.processEvents()
        shown = {row.tenant for row in all_tenants.model.rows[:30]}
        assert len(shown) == 3  # the first screen mixes the tenants
        assert w.filter_bar.tenant_box.currentText() == ALL_TENANTS
        tenant_col = all_tenants.view.columnWidth(Col.TENANT)
        # chip and name fit
        assert tenant_col >= all_tenants.view.fontMetrics().horizontalAdvance("initech") + 20
        assert all_tenants.model.index(0, Col.TENANT).data(Qt.ItemDataRole.DecorationRole) is not None
        save_screenshot(w, f"all-tenants-{theme}-{width}")
    finally:
        run_async(qloop, w.shutdown())
        for reader in readers:
            reader.close()
