"""The filter bar: tenant, types grouped by family (with counts), the query line (free text and field terms,
query_line.py), time range, test events. It only builds an `EventFilter`; the store runs it ("Filter
bar"). A query that cannot run leaves the last good filter in place and says why beside the line."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QIcon, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QWidget,
)

from tenant_events.query import QueryError, parse
from tenant_events.ui.look.colors import assign_tenant_colors
from tenant_events.ui.look.elided_label import ElidedLabel
from tenant_events.ui.look.theme import error_color, tenant_chips, tenant_color
from tenant_events.ui.window.filters.alert_chip import AlertChip, AlertPick, with_alert
from tenant_events.ui.window.filters.query_line import QueryLine
from tenant_events.values.events import EventFilter
from tenant_events.view.time_range import from_iso, range_label, to_iso
from tenant_events.wire import EventType

RANGES: tuple[tuple[str, timedelta | None], ...] = (
    ("Any time", None),
    ("Last 15 min", timedelta(minutes=15)),
    ("Last hour", timedelta(hours=1)),
    ("Last 24 h", timedelta(hours=24)),
    ("Custom", None),
)
CUSTOM = len(RANGES) - 1
PROBLEM_MAX = 300  # px: the problem beside the query line takes at most this (whole in its tooltip), and
# gives way first when the bar is short of room (down to 80 px), so the query line keeps the rest
ALL_TENANTS = "All tenants"  # the selector's entry for one view over every tenant (ui/window/all_tenants/)


class FilterBar(QWidget):
    filter_changed = Signal()
    tenant_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.custom_range: tuple[datetime, datetime] | None = None
        self.tenant_box = QComboBox()
        self.tenant_box.setAccessibleName("Tenant")
        self.tenant_box.currentTextChanged.connect(self._tenant_changed)
        self.types_button = QToolButton()
        self.types_button.setText("All types")
        self.types_button.setAccessibleName("Event types")
        self.types_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.types_menu = QMenu(self.types_button)
        self.type_actions: dict[str, QAction] = {}
        self.types_menu.addAction("Show all types", self.clear_types)
        for family in ("user", "group", "organization"):
            self.types_menu.addSection(family.capitalize())
            for t in EventType:
                if t.family == family:
                    act = self.types_menu.addAction(t.value)
                    act.setCheckable(True)
                    act.toggled.connect(self._types_toggled)
                    self.type_actions[t.value] = act
        self.types_button.setMenu(self.types_menu)
        self.alert_chip = AlertChip()
        self.alert_chip.removed.connect(self.filter_changed.emit)
        self.search = QueryLine()
        self._query = ""  # the last query handed out by current(): what the table shows
        # one line whatever the reason's length ("unknown field" lists every field): cut where drawn, whole in its
        # tooltip and in the query line's accessible description; the bar never grows or clips its neighbours
        self.query_problem = ElidedLabel()
        self.query_problem.setAccessibleName("Query problem")
        self.query_problem.setMaximumWidth(PROBLEM_MAX)
        self.query_problem.hide()
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self._query_settled)
        self.search.textChanged.connect(self._query_edited)
        self.search.returnPressed.connect(self._apply_now)
        self.range_box = QComboBox()
        self.range_box.setAccessibleName("Time range")
        self.range_box.addItems([label for label, _ in RANGES])
        self.range_box.currentIndexChanged.connect(lambda _i: self.filter_changed.emit())
        self.test_box = QCheckBox("Test events")
        self.test_box.setChecked(True)
        self.test_box.setToolTip("Include events whose purpose is 'test'")
        self.test_box.toggled.connect(lambda _c: self.filter_changed.emit())
        self.count_label = QLabel()
        self.count_label.setAccessibleName("Matching events")
        self._count_text = ""
        self.saved_button = QToolButton()  # its menu is filled by saved_filters.py
        self.saved_button.setText("Saved")
        self.saved_button.setAccessibleName("Saved filters")
        self.saved_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.saved_menu = QMenu(self.saved_button)
        self.saved_button.setMenu(self.saved_menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tenant_box)
        layout.addWidget(self.types_button)
        layout.addWidget(self.alert_chip)
        layout.addWidget(self.search, 1)
        layout.addWidget(self.query_problem)
        layout.addWidget(self.range_box)
        layout.addWidget(self.test_box)
        layout.addWidget(self.saved_button)
        layout.addWidget(self.count_label)

    def set_tenants(self, names: list[str], current: str | None = None) -> None:
        self.tenant_box.blockSignals(True)
        self.tenant_box.clear()
        assign_tenant_colors(names)
        if len(names) >= 2:
            self.tenant_box.addItem(tenant_chips(names), ALL_TENANTS)
        for name in names:
            swatch = QPixmap(12, 12)
            swatch.fill(tenant_color(name))
            self.tenant_box.addItem(QIcon(swatch), name)
        if current in names or (current == ALL_TENANTS and len(names) >= 2):
            self.tenant_box.setCurrentText(current)
        elif current is None and len(names) >= 2:  # showing every tenant
            self.tenant_box.setCurrentText(ALL_TENANTS)
        self.tenant_box.blockSignals(False)

    def selected_types(self) -> frozenset[str]:
        return frozenset(n for n, a in self.type_actions.items() if a.isChecked())

    def set_types(self, types: set[str] | frozenset[str]) -> None:
        for name, act in self.type_actions.items():
            act.blockSignals(True)
            act.setChecked(name in types)
            act.blockSignals(False)
        self._types_toggled()

    def clear_types(self) -> None:
        self.set_types(set())

    def cleared(self) -> EventFilter:
        """The filter with every part but an alert's off (what `clear_quietly` leaves)."""
        return EventFilter(query=with_alert(self.alert_chip.pick, ""))

    def clear_quietly(self) -> None:
        """Every part but an alert's off, no change said: the caller shows `cleared()` itself (the window opened
        on an event these parts hid)."""
        self.blockSignals(True)
        self.clear_types()
        self.search.clear()
        self._debounce.stop()  # (the query line emptied: nothing left to run once typing pauses)
        self._query = ""
        self.range_box.setCurrentIndex(0)
        self.test_box.setChecked(True)
        self.blockSignals(False)

    def set_custom_range(self, since: datetime, until: datetime) -> None:
        self.custom_range = (since, until)
        self.range_box.setItemText(CUSTOM, range_label(since, until))
        if self.range_box.currentIndex() == CUSTOM:
            self.filter_changed.emit()
        else:
            self.range_box.setCurrentIndex(CUSTOM)

    def set_counts(self, total: int, by_type: Mapping[str, int]) -> None:
        self._count_text = f"{total:,} event{'' if total == 1 else 's'}"
        self._show_count()
        for name, act in self.type_actions.items():
            n = by_type.get(name, 0)
            act.setText(f"{name}  ({n:,})" if n else name)

    # -- the filter as data (saved filters, the window state) ------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The filter as the user set it: relative ranges stay relative, a custom range keeps its from/to."""
        st: dict[str, Any] = {
            "types": sorted(self.selected_types()),
            "text": self._current_query(),
            "range": self.range_box.currentIndex(),
            "test": self.test_box.isChecked(),
        }
        pick = self.alert_chip.pick
        if pick is not None:
            st["alert"] = {"id": pick.alert_id, "name": pick.name, "tenant": pick.tenant}
        if st["range"] == CUSTOM:
            if self.custom_range is None:
                st["range"] = 0
            else:
                st["since"], st["until"] = (to_iso(t) for t in self.custom_range)
        return st

    def apply_state(self, state: dict[str, Any]) -> None:
        self.blockSignals(True)
        self.set_types(set(state.get("types", [])))
        self.search.setText(str(state.get("text", "")))
        index = int(state.get("range", 0))
        since, until = from_iso(state.get("since")), from_iso(state.get("until"))
        if index == CUSTOM and since is not None and until is not None and until > since:
            self.set_custom_range(since, until)
        else:
            self.range_box.setCurrentIndex(index if 0 <= index < CUSTOM else 0)
        self.test_box.setChecked(bool(state.get("test", True)))
        alert = state.get("alert")
        ok = (
            isinstance(alert, dict)
            and isinstance(alert.get("id"), int)
            and isinstance(alert.get("name"), str)
        )
        tenant = str(alert.get("tenant", "")) if ok and alert else ""
        self.alert_chip.set_pick(AlertPick(alert["id"], alert["name"], tenant) if ok and alert else None)
        self.blockSignals(False)
        self._debounce.stop()
        self._show_problem()
        self.filter_changed.emit()

    def describe(self) -> str:
        st = self.state()
        parts = [f"alert: {st['alert']['name']}"] if "alert" in st else []
        if st["types"]:
            parts.append(", ".join(st["types"]) if len(st["types"]) <= 2 else f"{len(st['types'])} types")
        if st["text"]:
            parts.append(f"“{st['text']}”")
        if st["range"] == CUSTOM:
            parts.append(self.range_box.itemText(CUSTOM))
        elif st["range"]:
            parts.append(RANGES[st["range"]][0].lower())
        if not st["test"]:
            parts.append("no test events")
        return " · ".join(parts) or "all events"

    def current(self, now: datetime | None = None) -> EventFilter:
        now = now or datetime.now(UTC)
        since = until = None
        idx = self.range_box.currentIndex()
        if idx == CUSTOM and self.custom_range:
            since, until = self.custom_range
        elif RANGES[idx][1] is not None:
            since = now - RANGES[idx][1]  # type: ignore[operator]
        return EventFilter(
            types=self.selected_types(),
            query=with_alert(self.alert_chip.pick, self._current_query()),
            since=since,
            until=until,
            include_test=self.test_box.isChecked(),
        )

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def _apply_now(self) -> None:
        self._debounce.stop()
        self._query_settled()

    @property
    def query_error(self) -> QueryError | None:
        """Why the text in the query line cannot run (None when it can)."""
        try:
            parse(self.search.text())
        except QueryError as exc:
            return exc
        return None

    def _current_query(self) -> str:
        """The query line's text if it can run, else the query the table already shows."""
        if self.query_error is None:
            self._query = self.search.text().strip()
        return self._query

    def _query_edited(self, _text: str) -> None:
        """Run the query once typing pauses; hide an old problem meanwhile (its span no longer fits the text)."""
        self.search.show_error(None)
        self.query_problem.hide()
        self._debounce.start()

    def _query_settled(self) -> None:
        """Typing paused (or Enter): run the query, or show what is wrong with it."""
        if self._show_problem():
            return
        self._current_query()  # it can run: it is the last good query now, whoever reads the filter
        self.filter_changed.emit()

    def _show_problem(self) -> bool:
        error = self.query_error
        self.search.show_error(error)
        if error is not None:
            self.query_problem.setText(error.reason)
            self.query_problem.setStyleSheet(f"color: {error_color().name()}")
        self.query_problem.setVisible(error is not None)
        self._show_count()
        return error is not None

    def _show_count(self) -> None:
        """The count; while the query line cannot run, it says the table still shows the last query that ran.
        Never narrower than its text: the problem beside the query line gives way first."""
        try:
            self._say_count()
        finally:
            self.count_label.setMinimumWidth(self.count_label.sizeHint().width())

    def _say_count(self) -> None:
        if self.query_error is None or not self.search.text().strip():
            self.count_label.setText(self._count_text)
            self.count_label.setStyleSheet("")
            self.count_label.setToolTip("")
            return
        last = f"“{self._query}”" if self._query else "no query"
        self.count_label.setText(
            f"{self._count_text} · query not run" if self._count_text else "query not run"
        )
        self.count_label.setStyleSheet(f"color: {error_color().name()}")
        self.count_label.setToolTip(
            f"The query cannot run; the table still shows the last one that could ({last})"
        )

    def _types_toggled(self) -> None:
        chosen = self.selected_types()
        if not chosen:
            self.types_button.setText("All types")
        elif len(chosen) == 1:
            self.types_button.setText(next(iter(chosen)))
        else:
            self.types_button.setText(f"{len(chosen)} types")
        self.filter_changed.emit()

    def _tenant_changed(self, name: str) -> None:
        pick = self.alert_chip.pick
        if pick is not None and name and pick.tenant != name:
            self.alert_chip.set_pick(None)  # another tenant's store: the alert's number means nothing there
        if name:
            self.tenant_changed.emit(name)
