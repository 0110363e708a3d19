"""One alert rule's fields in the rules editor, read into a rule entry (data, as stored in settings) and checked
with the rules' own validation (alerts/rule_model.py), each problem shown under the field it is about.

    Name · Severity · Event types (patterns) · Conditions (one a line: `field op value, value`; alternatives,
    at least one of which must hold, marked `one of: field op value`) · Threshold
    (at least N in S seconds, per type) · Time of day · Tenants · Group firings within N minutes · Resolve after
    N minutes without a firing · Notify · Notify again at each firing

The entry starts from the rule's own data and the form's fields are laid over it (`entry`), so what the form
does not show (an imported Sigma rule's explanation and ATT&CK tags, `include_test_events`, a sequence, the
fixtures, any field added later) is kept as it was.
"""

from __future__ import annotations

from typing import Any, Final

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tenant_events.alerts.rule_model import SEVERITIES, Rule, RuleError, load_rules
from tenant_events.ui.alerts.condition_lines import (
    CONDITIONS_HINT,
    EXCEPTIONS_HINT,
    KEPT_TIP,
    NO_CONDITIONS,
    NO_EXCEPTIONS,
    conditions_text,
    exceptions_text,
    parse_conditions,
    parse_exceptions,
    same_conditions,
    same_exceptions,
)
from tenant_events.ui.look.captions import whole_captions
from tenant_events.ui.look.theme import error_color

TIMES: Final = (
    ("any time", None),
    ("outside working hours", "outside_working_hours"),
    ("inside working hours", "inside_working_hours"),
)
_SHOWN_IN: Final = {"any_of": "conditions"}  # the alternatives are lines of the conditions text
FIELDS: Final = (
    "name",
    "severity",
    "types",
    "conditions",
    "except",
    "threshold",
    "time_of_day",
    "tenants",
    "coalesce_minutes",
    "resolve_after_minutes",
    "id",
)
COALESCE_TIP: Final = (
    "A firing this soon after the rule's open alert was raised is its next version (said again, unread "
    "again) instead of another alert; a later firing raises a new alert."
)


class RuleForm(QWidget):
    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.base: Rule | None = None  # the built-in rule being changed (None: one's own rule)
        self.shown: Rule | None = None  # the rule as loaded: what the form has no field for is kept from it
        self.keep_conditions = False  # the loaded conditions cannot be shown as text: kept as they are
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.name = QLineEdit()
        self.severity = QComboBox()
        self.severity.addItems([s.capitalize() for s in SEVERITIES])
        self.types = QLineEdit()
        self.types.setPlaceholderText("user.deleted, organization.*")
        self.conditions = QPlainTextEdit()
        # an empty box says what no condition means; an example in grey would read as the rule's own conditions
        self.conditions.setPlaceholderText(NO_CONDITIONS)
        self.conditions.setFixedHeight(self.fontMetrics().height() * 4 + 12)
        self.conditions_hint = QLabel(CONDITIONS_HINT)
        self.conditions_hint.setWordWrap(True)
        hint_font = self.conditions_hint.font()
        hint_font.setPointSizeF(hint_font.pointSizeF() * 0.9)
        self.conditions_hint.setFont(hint_font)
        self.excepts = QPlainTextEdit()
        self.excepts.setPlaceholderText(NO_EXCEPTIONS)
        self.excepts.setFixedHeight(self.fontMetrics().height() * 3 + 12)
        self.excepts_hint = QLabel(EXCEPTIONS_HINT)
        self.excepts_hint.setWordWrap(True)
        self.excepts_hint.setFont(hint_font)
        self.keep_excepts = False  # the loaded exceptions cannot be shown as text: kept as they are
        self.use_threshold = QCheckBox("at least")
        self.count = QSpinBox()
        self.count.setRange(0, 1_000_000)
        self.window_s = QDoubleSpinBox()
        self.window_s.setRange(0, 86_400)
        self.window_s.setDecimals(0)
        self.window_s.setSuffix(" s")
        self.per_type = QCheckBox("each type on its own")
        self.time_of_day = QComboBox()
        self.time_of_day.addItems([label for label, _ in TIMES])
        self.tenants = QLineEdit()
        self.tenants.setPlaceholderText("every tenant (or names, comma-separated)")
        self.coalesce = QDoubleSpinBox()
        self.coalesce.setRange(0, 1440)
        self.coalesce.setSuffix(" min")
        self.coalesce.setDecimals(0)
        self.resolve_after = QDoubleSpinBox()
        self.resolve_after.setRange(0, 10_080)
        self.resolve_after.setSuffix(" min")
        self.resolve_after.setDecimals(0)
        self.resolve_after.setSpecialValueText("never")
        self.resolve_after.setToolTip(
            "The alert resolves by itself after this long without a firing (0: never)"
        )
        self.notify = QCheckBox("Show a desktop notification (otherwise only the inbox)")
        self.renotify = QCheckBox("Notify again at each firing (critical alerts always do)")
        self.errors: dict[str, QLabel] = {}
        threshold = QHBoxLayout()
        for w in (self.use_threshold, self.count, QLabel("events within"), self.window_s, self.per_type):
            threshold.addWidget(w)
        threshold.addStretch(1)
        form = QFormLayout()
        rows: tuple[tuple[str, str, Any], ...] = (
            ("name", "&Name", self.name),
            ("severity", "&Severity", self.severity),
            ("types", "Event &types", self.types),
            ("conditions", "&Conditions", self.conditions),
            ("except", "E&xceptions", self.excepts),
            ("threshold", "T&hreshold", threshold),
            ("time_of_day", "Time of &day", self.time_of_day),
            ("tenants", "Te&nants", self.tenants),
            ("coalesce_minutes", "&Group firings within", self.coalesce),
            ("resolve_after_minutes", "&Resolve after", self.resolve_after),
        )
        for key, label, field in rows:
            box = QVBoxLayout()
            box.setSpacing(2)
            caption = QLabel(label)
            if isinstance(field, QWidget):
                box.addWidget(field)
                field.setAccessibleName(label.replace("&", ""))
                caption.setBuddy(field)
            else:
                box.addLayout(field)
                caption.setBuddy(self.use_threshold)
            problem = QLabel()
            problem.setWordWrap(True)
            problem.setStyleSheet(f"color: {error_color().name()}")
            problem.setVisible(False)
            problem.setAccessibleName(f"{label.replace('&', '')} problem")
            if key == "conditions":
                box.addWidget(self.conditions_hint)
            if key == "except":
                box.addWidget(self.excepts_hint)
            box.addWidget(problem)
            self.errors[key] = problem
            form.addRow(caption, box)
        form.addRow("", self.notify)
        form.addRow("", self.renotify)
        self.coalesce.setToolTip(COALESCE_TIP)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.explanation)
        layout.addLayout(whole_captions(form))
        layout.addStretch(1)
        for signal in (
            self.name.textChanged,
            self.types.textChanged,
            self.conditions.textChanged,
            self.excepts.textChanged,
            self.tenants.textChanged,
            self.severity.currentIndexChanged,
            self.count.valueChanged,
            self.window_s.valueChanged,
            self.per_type.toggled,
            self.use_threshold.toggled,
            self.time_of_day.currentIndexChanged,
            self.coalesce.valueChanged,
            self.resolve_after.valueChanged,
            self.notify.toggled,
            self.renotify.toggled,
        ):
            signal.connect(self._changed)
        for w in (self.count, self.window_s, self.per_type):
            self.use_threshold.toggled.connect(w.setEnabled)
        self._loading = False

    def load(self, rule: Rule, base: Rule | None) -> None:
        """Show `rule`; `base`: the built-in rule it changes (its name and types stay editable)."""
        self._loading = True
        self.base = base
        self.shown = rule
        self.explanation.setText(rule.explanation or "A rule of your own.")
        self.name.setText(rule.name)
        self.severity.setCurrentIndex(SEVERITIES.index(rule.severity))
        self.types.setText(", ".join(rule.types))
        text = conditions_text(rule)
        self.conditions.setPlainText(text)
        # conditions the one-line text cannot say (not, case-sensitive, a regex with a comma, changed from/to)
        # are kept as they are, never rewritten by an edit of another field
        parsed, alternatives, _ = parse_conditions(text)
        self.keep_conditions = not same_conditions(parsed, alternatives, rule)
        self.conditions.setReadOnly(self.keep_conditions)
        self.conditions.setToolTip(KEPT_TIP if self.keep_conditions else "")
        text = exceptions_text(rule)
        self.excepts.setPlainText(text)
        self.keep_excepts = not same_exceptions(parse_exceptions(text)[0], rule)
        self.excepts.setReadOnly(self.keep_excepts)
        self.excepts.setToolTip(KEPT_TIP if self.keep_excepts else "")
        t = rule.threshold
        self.use_threshold.setChecked(t is not None)
        for w in (self.count, self.window_s, self.per_type):
            w.setEnabled(t is not None)
        self.count.setValue(t.count if t else 20)
        self.window_s.setValue(t.window_seconds if t else 60)
        self.per_type.setChecked(bool(t and t.per_type))
        when = rule.time_of_day.when if rule.time_of_day else None
        self.time_of_day.setCurrentIndex([v for _, v in TIMES].index(when))
        self.tenants.setText(", ".join(rule.tenants))
        self.coalesce.setValue(rule.coalesce_minutes)
        self.resolve_after.setValue(rule.resolve_after_s / 60)
        self.notify.setChecked(rule.notify)
        self.renotify.setChecked(rule.renotify)
        self._loading = False
        self.show_errors([])

    def entry(self, rule_id: str, enabled: bool) -> tuple[dict[str, Any], dict[str, str]]:
        """The rule as a full entry, and the problems of the texts by field (conditions, except): the rule's own data
        with the form's fields laid over it, so what the form does not show is kept as it was."""
        own = self.shown.model_dump(mode="json", exclude_none=True) if self.shown is not None else {}
        conditions, any_of, problem = parse_conditions(self.conditions.toPlainText())
        if self.keep_conditions and self.shown is not None:
            conditions, any_of, problem = own["conditions"], own["any_of"], ""
        excepts, except_problem = parse_exceptions(self.excepts.toPlainText())
        if self.keep_excepts and self.shown is not None:
            excepts, except_problem = own["except"], ""
        edited: dict[str, Any] = {
            "id": rule_id,
            "name": self.name.text().strip(),
            "enabled": enabled,
            "notify": self.notify.isChecked(),
            "renotify": self.renotify.isChecked(),
            "severity": SEVERITIES[self.severity.currentIndex()],
            "types": [t.strip() for t in self.types.text().split(",") if t.strip()],
            "conditions": conditions,
            "any_of": any_of,
            "except": excepts,
            "tenants": [t.strip() for t in self.tenants.text().split(",") if t.strip()],
            "coalesce_minutes": self.coalesce.value(),
            "threshold": None,
            "time_of_day": None,
        }
        resolve_after = self.resolve_after.value()
        if (
            self.shown is None
            or self.shown.resolve_after_minutes is not None
            or resolve_after != round(self.shown.resolve_after_s / 60)
        ):
            edited["resolve_after_minutes"] = resolve_after
        if self.use_threshold.isChecked():
            edited["threshold"] = {
                **own.get("threshold", {}),
                "count": self.count.value(),
                "window_seconds": self.window_s.value(),
                "per_type": self.per_type.isChecked(),
            }
        when = TIMES[self.time_of_day.currentIndex()][1]
        if when is not None:
            edited["time_of_day"] = {**own.get("time_of_day", {}), "when": when}
        problems = {"conditions": problem, "except": except_problem}
        return {**own, **edited}, {key: text for key, text in problems.items() if text}

    def validate(
        self, rule_id: str, enabled: bool, builtins: tuple[Rule, ...]
    ) -> tuple[Rule | None, list[RuleError]]:
        """The rule as typed, checked as the settings file's entries are; errors shown under their fields."""
        entry, problems = self.entry(rule_id, enabled)
        ruleset = load_rules([entry], builtins)
        errors = [RuleError(rule_id, key, text) for key, text in problems.items()] + list(ruleset.errors)
        self.show_errors(errors)
        return (ruleset.get(rule_id) if not errors else None), errors

    def show_errors(self, errors: list[RuleError]) -> None:
        for label in self.errors.values():
            label.setVisible(False)
        for error in errors:
            # a problem of the rule as a whole names its field first ("any_of.0.field: no event … carries …")
            key = error.field.split(".", 1)[0] or error.message.split(":", 1)[0].split(".", 1)[0]
            label = self.errors.get(_SHOWN_IN.get(key, key), self.errors["name"])
            where = error.field if "." in error.field else ""
            label.setText(f"{where + ': ' if where else ''}{error.message}")
            label.setVisible(True)

    def _changed(self) -> None:
        if not self._loading:
            self.edited.emit()
