"""The rules editor's "Backtest": the rule as edited (an exception added, not saved) replayed over a store holding
days of history, per day beside the rule as it stands, drawn as a chart — and the saved settings untouched."""

from __future__ import annotations

import asyncio

import pytest

from cli.test_rules_backtest_cli import _store
from helpers.fixtures_ui import run_async, save_screenshot, until
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.backtest import backtest
from tenant_events.paths import AppPaths
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.ui.alerts.rules_page import RulesPage

pytestmark = [pytest.mark.gui]


def test_backtest_of_an_edited_rule_shows_a_chart_per_day_beside_the_rule_as_it_stands(
    qloop, qtbot, tmp_path
):
    _store(tmp_path)
    database = AppPaths.resolve(tmp_path).database_file("acme")
    settings = AlertSettings(rules=[{"id": "mass-deletion-by-actor", "max_alerts_per_day": 1}])
    page = RulesPage(settings)
    qtbot.addWidget(page)
    page.resize(1100, 700)

    async def backtester(rule, standing):
        def work():
            with AlertInbox(database) as inbox:
                return backtest(inbox, rule, hours=settings.working_hours, profile="acme", standing=standing)

        return [("acme", await asyncio.to_thread(work))]

    page.set_backtester(backtester)
    for row in range(page.list.count()):
        if page.list.item(row).text().startswith("Mass deletion by one actor"):
            page.list.setCurrentRow(row)
    assert page.backtest_button.isEnabled()
    page.form.excepts.setPlainText("context.client.id equals cli_HRIMPORT")  # edited, not saved

    async def scenario() -> None:
        page.backtest_button.click()
        await until(lambda: page.backtest_window is not None, 30, "the backtest window")

    run_async(qloop, scenario(), timeout=60)
    window = page.backtest_window
    assert window is not None
    [chart] = window.charts
    report = chart.report
    assert report.days == {chart.days[1]: 1}  # the script's day only: the HR sync is excepted
    assert report.standing is not None and sum(report.standing.values()) == 4
    assert list(report.standing.values()) == [1, 2, 1] and report.budget == 1
    assert report.over == {}
    qtbot.waitExposed(window)
    save_screenshot(window, "backtest-chart")
    # the settings as saved still hold the rule without the exception
    assert page.saved["mass-deletion-by-actor"].except_ == []
