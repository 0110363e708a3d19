"""Settings: tenants (add, edit, remove, sign in/out), notifications, retention, start at login, theme.

Edits a copy of `Settings`; "Apply"/"OK" emit `settings_changed(copy)` and the app saves and applies it.
Tenant actions that need the network (sign in/out) are signals handled by the app.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tenant_events.destinations.editor import DestinationEditor
from tenant_events.settings import Settings
from tenant_events.tenant.silences import Silences
from tenant_events.ui.alerts.destinations_page import DestinationsPage
from tenant_events.ui.alerts.per_type_rule import per_type_on, with_per_type
from tenant_events.ui.alerts.quiet_hours_box import QuietHoursBox
from tenant_events.ui.alerts.rules_page import RulesPage
from tenant_events.ui.alerts.silences_page import SilencesPage
from tenant_events.ui.look.theme import THEMES
from tenant_events.values.retention import TierDisk
from tenant_events.wire import EventType
from tenant_events.wire.event_types import DEFAULT_NOTIFY_NAMES


class SettingsDialog(QDialog):
    settings_changed = Signal(object)  # Settings
    add_tenant_requested = Signal()
    edit_tenant_requested = Signal(str)
    remove_tenant_requested = Signal(str)
    sign_in_requested = Signal(str)
    sign_out_requested = Signal(str)
    team_archive_requested = Signal(str)  # a hub tenant's team archive (ui/dialogs/team_archive_dialog.py)

    def __init__(
        self,
        settings: Settings,
        signed_in: set[str],
        parent: QWidget | None = None,
        destinations: DestinationEditor | None = None,
        disk: Mapping[str, TierDisk] | None = None,
        silences: Silences | None = None,
    ) -> None:
        super().__init__(parent)
        self.disk = dict(disk or {})  # each tenant's disk per tier, shown on the General tab
        self.setWindowTitle("Tenant Events settings")
        self.resize(860, 660)
        self.settings = settings.model_copy(deep=True)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._tenants_tab(signed_in), "&Tenants")
        self.tabs.addTab(self._notifications_tab(), "&Notifications")
        self.rules_page = RulesPage(self.settings.alerts)
        self.tabs.addTab(self.rules_page, "&Alert rules")
        self.destinations_page = DestinationsPage(destinations)
        self.destinations_page.changed.connect(self._destinations_saved)
        self.tabs.addTab(self.destinations_page, "Alert &destinations")
        self.silences_page = SilencesPage(silences) if silences is not None else None
        if self.silences_page is not None:
            self.tabs.addTab(self.silences_page, "&Silences")
        self.tabs.addTab(self._general_tab(), "&General")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Apply
            | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons = buttons
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(buttons)

    def _destinations_saved(self, destinations: list[object]) -> None:
        """The page saved at once: this copy keeps the same list, so Apply or OK does not undo it."""
        self.settings.destinations = list(destinations)  # type: ignore[arg-type]

    def _tenants_tab(self, signed_in: set[str]) -> QWidget:
        page = QWidget()
        self.tenant_list = QListWidget()
        self.tenant_list.setAccessibleName("Tenants")
        self.set_tenants(signed_in)
        row = QHBoxLayout()
        for text, slot in (
            ("Add…", self.add_tenant_requested.emit),
            ("Edit…", lambda: self._with_current(self.edit_tenant_requested)),
            ("Remove", lambda: self._with_current(self.remove_tenant_requested)),
            ("Sign in", lambda: self._with_current(self.sign_in_requested)),
            ("Sign out", lambda: self._with_current(self.sign_out_requested)),
            ("Team archive…", lambda: self._with_current(self.team_archive_requested)),
        ):
            button = QPushButton(text)
            button.clicked.connect(slot)
            row.addWidget(button)
        self.team_archive_button = button  # (for a tenant read from a team hub only)
        self.team_archive_button.setToolTip("Where the team keeps the tenant's shared history")
        self.tenant_list.currentRowChanged.connect(self._tenant_chosen)
        self._tenant_chosen(self.tenant_list.currentRow())
        layout = QVBoxLayout(page)
        layout.addWidget(self.tenant_list)
        layout.addLayout(row)
        return page

    def set_tenants(self, signed_in: set[str]) -> None:
        """One row per tenant: those signed in to directly, then those read from a team hub."""
        self.tenant_list.clear()
        self._names: list[str] = []
        for t in self.settings.tenants:
            state = "signed in" if t.name in signed_in else "signed out"
            self._names.append(t.name)
            self.tenant_list.addItem(f"{t.name} — {t.domain} ({state})")
        for h in self.settings.hubs:
            state = "connected" if h.name in signed_in else "not connected"
            self._names.append(h.name)
            self.tenant_list.addItem(f"{h.name} — from hub {', '.join(h.hub_urls)} ({state})")

    def forget_tenant(self, name: str, signed_in: set[str]) -> None:
        """The app removed `name`: drop it here too, so Apply or OK does not bring it back."""
        self.settings.tenants = [t for t in self.settings.tenants if t.name != name]
        self.settings.hubs = [h for h in self.settings.hubs if h.name != name]
        self.set_tenants(signed_in)

    def _tenant_chosen(self, row: int) -> None:
        name = self._names[row] if 0 <= row < len(self._names) else None
        self.team_archive_button.setEnabled(self.settings.hub(name) is not None)

    def _with_current(self, signal: SignalInstance) -> None:
        row = self.tenant_list.currentRow()
        if 0 <= row < len(self._names):
            signal.emit(self._names[row])

    def _notifications_tab(self) -> QWidget:
        page = QWidget()
        n = self.settings.notifications
        self.notify_enabled = QCheckBox("Show desktop notifications")
        self.notify_enabled.setChecked(n.enabled)
        self.types_tree = QTreeWidget()
        self.types_tree.setHeaderHidden(True)
        self.types_tree.setAccessibleName("Event types that notify")
        chosen = set(n.event_types) or set(DEFAULT_NOTIFY_NAMES)
        families: dict[str, QTreeWidgetItem] = {}
        for t in EventType:
            parent = families.get(t.family)
            if parent is None:
                parent = QTreeWidgetItem(self.types_tree, [t.family.capitalize()])
                parent.setFlags(
                    parent.flags() | Qt.ItemFlag.ItemIsAutoTristate | Qt.ItemFlag.ItemIsUserCheckable
                )
                families[t.family] = parent
            item = QTreeWidgetItem(parent, [t.value])
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(0, Qt.CheckState.Checked if t.value in chosen else Qt.CheckState.Unchecked)
        self.types_tree.expandAll()
        self.dnd = QCheckBox("Do not disturb (events are still stored)")
        self.dnd.setChecked(n.do_not_disturb)
        self.per_type = QCheckBox("Also notify every event of these types (off: only the alert rules notify)")
        self.per_type.setChecked(per_type_on(self.settings.alerts))
        self._per_type_was, self._chosen_was = self.per_type.isChecked(), sorted(chosen)
        self.types_tree.setEnabled(self.per_type.isChecked())
        self.per_type.toggled.connect(self.types_tree.setEnabled)
        self.quiet = QuietHoursBox(n)
        layout = QVBoxLayout(page)
        layout.addWidget(self.notify_enabled)
        layout.addWidget(self.per_type)
        layout.addWidget(self.types_tree)
        layout.addWidget(self.dnd)
        layout.addWidget(self.quiet)
        layout.addWidget(self.quiet.critical)
        return page

    def _general_tab(self) -> QWidget:
        page = QWidget()
        self.theme = QComboBox()
        self.theme.addItems([t.capitalize() for t in THEMES])
        self.theme.setCurrentIndex(THEMES.index(self.settings.theme))
        self.start_at_login = QCheckBox("Start Tenant Events when I log in (in the tray)")
        self.start_at_login.setChecked(self.settings.start_at_login)
        r = self.settings.retention
        self.keep_live = QSpinBox()
        self.keep_live.setRange(1, 3650)
        self.keep_live.setSuffix(" days")
        self.keep_live.setValue(r.keep_live_days)
        self.keep_live.setToolTip("Older events move to the archive: smaller on disk, found by every search")
        self.keep_archive = QSpinBox()
        self.keep_archive.setRange(0, 36500)
        self.keep_archive.setSpecialValueText("keep forever")
        self.keep_archive.setSuffix(" days")
        self.keep_archive.setValue(r.keep_archive_days or 0)
        self.keep_archive.setToolTip("Archived events older than this are deleted, a month at a time")
        self.max_events = QSpinBox()
        self.max_events.setRange(0, 50_000_000)
        self.max_events.setSingleStep(100_000)
        self.max_events.setSpecialValueText("no limit")
        self.max_events.setValue(r.max_events or 0)
        self.max_events.setToolTip("Beyond this many, the oldest live events move to the archive early")
        form = QFormLayout(page)
        form.addRow("T&heme", self.theme)
        form.addRow("", self.start_at_login)
        form.addRow("Keep &live for", self.keep_live)
        form.addRow("Keep in the &archive for", self.keep_archive)
        form.addRow("Keep at most live", self.max_events)
        for name, disk in sorted(self.disk.items()):
            form.addRow(f"Disk of {name}", QLabel(disk.words()))
        return page

    def collect(self) -> Settings:
        s = self.settings.model_copy(deep=True)
        s.theme = THEMES[self.theme.currentIndex()]  # type: ignore[assignment]
        s.start_at_login = self.start_at_login.isChecked()
        count = self.max_events.value()
        s.retention.keep_live_days = self.keep_live.value()
        s.retention.keep_archive_days = self.keep_archive.value() or None
        s.retention.max_events = max(count, 1000) if count else None
        s.notifications.enabled = self.notify_enabled.isChecked()
        s.notifications.do_not_disturb = self.dnd.isChecked()
        chosen: list[str] = []
        for i in range(self.types_tree.topLevelItemCount()):
            fam = self.types_tree.topLevelItem(i)
            children = [fam.child(j) for j in range(fam.childCount())] if fam else []
            chosen += [c.text(0) for c in children if c and c.checkState(0) == Qt.CheckState.Checked]
        s.notifications.event_types = chosen
        s.alerts.rules = self.rules_page.entries()
        hours = self.rules_page.working_hours.collect()
        if hours is not None:
            s.alerts.working_hours = hours
        on = self.per_type.isChecked()  # the tree's types go to the rule when it or they changed here
        changed = on != self._per_type_was or sorted(chosen) != self._chosen_was
        with_per_type(s.alerts, enabled=on if changed else None, types=chosen if changed else None)
        self.quiet.collect(s.notifications)  # kept as saved while the fields cannot work (see apply)
        return s

    def apply(self) -> bool:
        """Emit the edited settings; False (nothing applied) while a field says what is wrong."""
        if not self.quiet.check():
            self.tabs.setCurrentIndex(1)
            self.quiet.setFocus()
            return False
        if self.rules_page.error_count() or not self.rules_page.working_hours.check():
            self.tabs.setCurrentWidget(self.rules_page)
            return False
        self.settings = self.collect()
        self.settings_changed.emit(self.settings)
        return True

    def _ok(self) -> None:
        if self.apply():
            self.accept()
