"""Settings → Alert rules: the built-in rules and one's own, switched on/off, edited, tried on stored history.

    ┌ rules (checkbox = on) ─┐ ┌ the selected rule's fields (rule_form.py), problems under each field ──────┐
    │ ☑ Mass deletion        │ │ …                                                                        │
    │ ☐ Events of chosen …   │ │ [Test against history]  would have fired 3 times …   Fixtures: 4 of 4 pass │
    │ ⚠ my-rule (a problem)  │ └──────────────────────────────────────────────────────────────────────────┘
    └ [New rule] [Delete] [Reset to built-in] ┘
    Working hours: from 08:00 to 18:00 on ☑ Mon … ☐ Sun  (working_hours_box.py)

A new rule starts switched off and without a desktop notification: it does nothing until it is configured and
switched on. The list shows whole names (its width follows the longest; the tooltip has the explanation).

`entries()` gives `alerts.rules` back: a built-in rule's entry holds only what differs from it, one's own rule
all of it. An entry of the settings file that is invalid stays as it is (listed with its problem) until it is
deleted, so nothing saved is lost. The history test runs through `tester` (the app reads the stores); the rule's
fixtures (events that must fire it and must not, alerts/fixtures.py) run on a worker thread whenever a rule is
shown and again with "Test against history", their result beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.backtest import Backtest
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.fixtures import FixtureResult, run_rule_tests
from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.rule_model import Rule, RuleError, load_rules
from tenant_events.ui.alerts.backtest_window import BacktestWindow
from tenant_events.ui.alerts.rule_form import RuleForm
from tenant_events.ui.alerts.sigma_import_dialog import SigmaImportDialog
from tenant_events.ui.alerts.working_hours_box import WorkingHoursBox

Tester = Callable[[Rule], Awaitable[str]]
# (the rule as edited, the rule as it stands or None) → a backtest per tenant with a store
Backtester = Callable[[Rule, Rule | None], Awaitable[list[tuple[str, Backtest]]]]
_BUILTIN = {r.id: r for r in BUILTIN_RULES}


class RulesPage(QWidget):
    def __init__(self, alerts: AlertSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tester: Tester | None = None
        self.backtester: Backtester | None = None
        self.backtest_window: BacktestWindow | None = None
        ruleset = rule_set(alerts)
        self.saved: dict[str, Rule] = {r.id: r for r in ruleset.rules}  # as they stand, before this dialog
        self.lists = alerts.lists  # the settings' value lists an imported rule may name
        self.rules: dict[str, Rule] = {r.id: r for r in ruleset.rules}
        self.problems: dict[str, list[RuleError]] = {}
        self.broken: list[
            tuple[Any, RuleError]
        ] = []  # entries of the file that are invalid, kept as they are
        for entry in alerts.rules:
            alone = load_rules([entry], BUILTIN_RULES)
            if alone.errors:
                self.broken.append((entry, alone.errors[0]))
        self._task: asyncio.Task[None] | None = None
        self.list = QListWidget()
        self.list.setAccessibleName("Alert rules")
        self.list.currentRowChanged.connect(self._show)
        self.list.itemChanged.connect(self._toggled)
        self.form = RuleForm()
        self.form.edited.connect(self._edited)
        self.add_button = QPushButton("&New rule")
        self.add_button.clicked.connect(self.add_rule)
        self.delete_button = QPushButton("&Delete")
        self.delete_button.clicked.connect(self.delete_rule)
        self.sigma_button = QPushButton("&Import Sigma rules…")
        self.sigma_button.clicked.connect(self.import_sigma)
        self.sigma_dialog: SigmaImportDialog | None = None
        self.reset_button = QPushButton("&Reset to built-in")
        self.reset_button.clicked.connect(self.reset_rule)
        self.test_button = QPushButton("&Test against history")
        self.test_button.clicked.connect(self.test_rule)
        self.backtest_button = QPushButton("&Backtest")
        self.backtest_button.setToolTip(
            "What the rule as edited would have raised over the whole stored history, per day, beside the rule "
            "as it stands"
        )
        self.backtest_button.clicked.connect(self.backtest_rule)
        self.backtest_button.setEnabled(False)
        self.test_result = QLabel()
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fixtures_result = QLabel()
        self.fixtures_result.setAccessibleName("Fixtures")
        self.fixtures_result.setWordWrap(True)
        self.fixtures_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._fixtures_task: asyncio.Task[None] | None = None
        # The fixtures and the trial run on a worker thread and may end after the dialog is closed and deleted:
        # their result is then dropped, not written into widgets that are gone.
        self._alive = alive = [True]
        self.destroyed.connect(lambda *_: alive.clear())
        left = QWidget()
        left_box = QVBoxLayout(left)
        left_box.setContentsMargins(0, 0, 0, 0)
        left_box.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        for b in (self.add_button, self.delete_button, self.reset_button):
            buttons.addWidget(b)
        left_box.addLayout(buttons)
        left_box.addWidget(self.sigma_button)
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(0, 0, 0, 0)
        right_box.addWidget(self.form, 1)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.backtest_button)
        test_row.addWidget(self.test_result, 1)
        test_row.addWidget(self.fixtures_result, 1)
        right_box.addLayout(test_row)
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        self.working_hours = WorkingHoursBox(alerts.working_hours)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.working_hours)
        self._fill()
        self.list.setCurrentRow(0)
        width = self.list.sizeHintForColumn(0) + 2 * self.list.frameWidth() + 24  # whole names, checkbox too
        self.list.setMinimumWidth(min(max(width, 200), 420))
        splitter.setSizes([self.list.minimumWidth(), 560])

    def set_tester(self, tester: Tester) -> None:
        """How "Test against history" tries a rule (the app reads the tenants' stores)."""
        self.tester = tester
        self.test_button.setEnabled(self.current_id() is not None)

    def set_backtester(self, backtester: Backtester) -> None:
        """How "Backtest" replays a rule over the stores (the app reads them)."""
        self.backtester = backtester
        self.backtest_button.setEnabled(self.current_id() is not None)

    def backtest_rule(self) -> None:
        rule_id = self.current_id()
        if rule_id is None or self.backtester is None:
            return
        if self.problems.get(rule_id):
            self.test_result.setText("Fix the rule's problems first.")
            return
        self.test_result.setText("Backtesting the rule over the whole stored history…")
        self.backtest_button.setEnabled(False)
        work = self.backtester(self.rules[rule_id], self.saved.get(rule_id))
        self._task = asyncio.ensure_future(self._backtest(work))

    async def _backtest(self, work: Awaitable[list[tuple[str, Backtest]]]) -> None:
        try:
            reports = await work
            if self._alive:
                self.test_result.setText("")
                self.backtest_window = BacktestWindow(reports, self)
                self.backtest_window.show()
        finally:
            if self._alive:
                self.backtest_button.setEnabled(True)

    # -- the list ------------------------------------------------------------------------------------------------
    def _fill(self, select: str | None = None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for rule in self.rules.values():
            item = QListWidgetItem(self._label(rule.id))
            item.setData(Qt.ItemDataRole.UserRole, rule.id)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if rule.enabled else Qt.CheckState.Unchecked)
            item.setToolTip(rule.explanation or rule.name)
            self.list.addItem(item)
        for _entry, error in self.broken:
            item = QListWidgetItem(f"⚠ {error}")
            item.setToolTip(f"{error} — fix it in the settings file, or delete it here")
            item.setData(Qt.ItemDataRole.UserRole, None)
            self.list.addItem(item)
        self.list.blockSignals(False)
        if select is not None:
            ids = list(self.rules)
            self.list.setCurrentRow(ids.index(select) if select in ids else 0)

    def _label(self, rule_id: str) -> str:
        rule = self.rules[rule_id]
        mark = "⚠ " if self.problems.get(rule_id) else ""
        whose = "" if rule_id in _BUILTIN else " · Sigma" if rule.origin == "sigma" else " · yours"
        return f"{mark}{rule.name} ({rule.severity}){whose}"

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        value = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return value if isinstance(value, str) else None

    def _show(self, _row: int) -> None:
        rule_id = self.current_id()
        self.test_result.setText("")
        self.form.setEnabled(rule_id is not None)
        self.reset_button.setEnabled(rule_id in _BUILTIN)
        self.delete_button.setEnabled(rule_id not in _BUILTIN)
        self.test_button.setEnabled(rule_id is not None and self.tester is not None)
        self.backtest_button.setEnabled(rule_id is not None and self.backtester is not None)
        if rule_id is None:
            self.fixtures_result.setText("")
            return
        self.form.load(self.rules[rule_id], _BUILTIN.get(rule_id))
        if self.problems.get(rule_id):
            self._edited()
        self.run_fixtures()

    def run_fixtures(self) -> None:
        """Run the shown rule's fixtures on a worker thread; the result goes beside "Test against history"."""
        rule_id = self.current_id()
        rule = self.rules.get(rule_id) if rule_id is not None else None
        if rule is None or not rule.tests:
            self.fixtures_result.setText("No fixtures" if rule is not None else "")
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop yet (the dialog built before the app runs): shown when selected
            return
        self.fixtures_result.setText(f"Running {len(rule.tests)} fixtures…")
        self._fixtures_task = asyncio.ensure_future(self._fixtures(rule))

    async def _fixtures(self, rule: Rule) -> None:
        results = await asyncio.to_thread(run_rule_tests, rule)
        if self._alive and self.current_id() == rule.id:
            self.fixtures_result.setText(fixtures_text(results))

    def _toggled(self, item: QListWidgetItem) -> None:
        rule_id = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(rule_id, str) and rule_id in self.rules:
            on = item.checkState() == Qt.CheckState.Checked
            self.rules[rule_id] = self.rules[rule_id].model_copy(update={"enabled": on})

    def _edited(self) -> None:
        rule_id = self.current_id()
        if rule_id is None:
            return
        enabled = self.rules[rule_id].enabled
        rule, errors = self.form.validate(rule_id, enabled, BUILTIN_RULES)
        self.problems[rule_id] = errors
        if rule is not None:
            self.rules[rule_id] = rule
        item = self.list.currentItem()
        if item is not None:
            item.setText(self._label(rule_id))

    # -- buttons -------------------------------------------------------------------------------------------------
    def add_rule(self) -> None:
        n = 1
        while f"my-rule-{n}" in self.rules:
            n += 1
        # off and silent until configured: a half-made rule must not notify on every user.deleted meanwhile
        rule = Rule(
            id=f"my-rule-{n}",
            name=f"My rule {n}",
            types=["user.deleted"],
            severity="warning",
            enabled=False,
            notify=False,
        )
        self.rules[rule.id] = rule
        self._fill(select=rule.id)
        self.form.name.setFocus()
        self.form.name.selectAll()

    def delete_rule(self) -> None:
        row = self.list.currentRow()
        rule_id = self.current_id()
        if rule_id is not None and rule_id not in _BUILTIN:
            del self.rules[rule_id]
            self.problems.pop(rule_id, None)
        elif rule_id is None and row >= len(self.rules):
            del self.broken[row - len(self.rules)]
        self._fill(select=next(iter(self.rules)))

    def import_sigma(self) -> None:
        """Open "Import Sigma rules": the rules it reads join the list (saved with the settings)."""
        self.sigma_dialog = SigmaImportDialog(AlertSettings(rules=self.entries(), lists=self.lists), self)
        self.sigma_dialog.accepted.connect(self._take_imported)
        self.sigma_dialog.open()

    def _take_imported(self) -> None:
        imported = self.sigma_dialog.imported if self.sigma_dialog is not None else None
        if imported is None or not imported.rules:
            return
        for rule in imported.rules:
            self.rules[rule.id] = rule
            self.problems.pop(rule.id, None)
        self._fill(select=imported.rules[0].id)

    def reset_rule(self) -> None:
        rule_id = self.current_id()
        if rule_id in _BUILTIN:
            self.rules[rule_id] = _BUILTIN[rule_id]
            self.problems.pop(rule_id, None)
            self._fill(select=rule_id)

    def test_rule(self) -> None:
        rule_id = self.current_id()
        if rule_id is None or self.tester is None:
            return
        if self.problems.get(rule_id):
            self.test_result.setText("Fix the rule's problems first.")
            return
        self.test_result.setText("Trying the rule on the last 7 days of stored events…")
        self.test_button.setEnabled(False)
        self.run_fixtures()
        self._task = asyncio.ensure_future(self._test(rule_id, self.tester(self.rules[rule_id])))

    async def _test(self, rule_id: str, result: Awaitable[str]) -> None:
        try:
            text = await result
            if self._alive and self.current_id() == rule_id:  # else another rule is shown: not its answer
                self.test_result.setText(text)
        finally:
            if self._alive:
                self.test_button.setEnabled(True)

    # -- out -----------------------------------------------------------------------------------------------------
    def error_count(self) -> int:
        return sum(1 for errors in self.problems.values() if errors)

    def first_problem(self) -> str | None:
        return next((rule_id for rule_id, errors in self.problems.items() if errors), None)

    def entries(self) -> list[dict[str, Any]]:
        """`alerts.rules` as edited: built-in rules' changes, one's own rules, invalid entries kept."""
        out: list[dict[str, Any]] = []
        for rule in self.rules.values():
            full = rule.model_dump(mode="json")
            base = _BUILTIN.get(rule.id)
            if base is None:
                out.append(
                    rule.model_dump(mode="json", exclude_defaults=True)
                    | {"id": rule.id, "name": rule.name, "types": rule.types}
                )
                continue
            was = base.model_dump(mode="json")
            lean = rule.model_dump(mode="json", exclude_none=True)  # nested parts without their unset fields
            changed = {k: lean.get(k) for k, v in full.items() if was.get(k) != v}
            if changed:
                out.append({"id": rule.id, **changed})
        out += [entry for entry, _ in self.broken]
        return out


def fixtures_text(results: list[FixtureResult]) -> str:
    """'Fixtures: all 4 pass' or 'Fixtures: 1 of 2 fail — someone else deleted (expected: fires; did not fire)'."""
    failed = [r for r in results if not r.passed]
    if not failed:
        return f"Fixtures: all {len(results)} pass"
    first = failed[0]
    fired = "did not fire" if not first.firings else f"fired {first.firings}×"
    return (
        f"Fixtures: {len(failed)} of {len(results)} fail — {first.name} (expected: {first.expect}; {fired})"
    )
