"""The inbox's table: one row per alert, by latest activity (the alert that fired last first); unread rows bold;
severity in its colour; a silenced alert's row dimmed, its state "· silenced"; each column sorts (`sort`, the
header's click).

Rows are `InboxEntry`s (alert_book.py); a reload resets the model (the list is at most a few hundred alerts) and
keeps the order the user chose. "Last firing" is when the alert last fired (a raise or a firing folded into it),
shown in local time at the last moment (CONTRIBUTING.md "Style"); "State" its phase (values/alert_lifecycle.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from enum import IntEnum
from typing import Any, Final

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from tenant_events.alerts.presentation import title
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.look.colors import pick
from tenant_events.ui.look.theme import is_dark
from tenant_events.values.alerts import Severity
from tenant_events.values.silences import Silence

SEVERITY_COLORS: Final[dict[Severity, tuple[str, str]]] = {
    "critical": ("#cf222e", "#ff7b72"),
    "warning": ("#9a6700", "#d29922"),
    "info": ("#0969da", "#58a6ff"),
}
SEVERITY_MARK: Final[dict[Severity, str]] = {
    "critical": "▲ Critical",
    "warning": "◆ Warning",
    "info": "● Info",
}
ENTRY_ROLE: Final = Qt.ItemDataRole.UserRole + 1
_SILENCE_ROLES: Final = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.ToolTipRole,
        Qt.ItemDataRole.AccessibleTextRole,
    }
)
Index = QModelIndex | QPersistentModelIndex


class Col(IntEnum):
    SEVERITY = 0
    ALERT = 1
    STATE = 2
    EVENTS = 3
    TENANT = 4
    TIME = 5


HEADERS: Final = ("Severity", "Alert", "State", "Events", "Tenant", "Last firing")
_RANK: Final[dict[Severity, int]] = {"info": 0, "warning": 1, "critical": 2}


def local_stamp(seconds: float, now: datetime | None = None) -> str:
    """A wall-clock time (unix s) as `local_time` says it."""
    return local_time(datetime.fromtimestamp(seconds).astimezone().isoformat(), now)


def _sort_key(e: InboxEntry, col: int, now: float) -> tuple[Any, ...]:
    a = e.alert
    keys: dict[int, Any] = {
        Col.SEVERITY: _RANK[a.severity],
        Col.ALERT: title(a).casefold(),
        Col.STATE: str(a.phase(now)),
        Col.EVENTS: a.event_count,
        Col.TENANT: e.profile.casefold(),
    }
    return (keys.get(col, 0), a.fired_at, a.id)  # ties (and "Last firing"): the latest activity


def _key(e: InboxEntry) -> tuple[str, int]:
    return (e.profile, e.alert.id)


def local_time(iso: str, now: datetime | None = None) -> str:
    """14:32:05 today, else 24 Nov 14:32 (local time)."""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return iso
    today = (now or datetime.now().astimezone()).date()
    return moment.strftime("%H:%M:%S") if moment.date() == today else moment.strftime("%d %b %H:%M")


DIMMED: Final = ("#8c959f", "#6e7681")  # a silenced alert's row: still listed, greyed


class InboxModel(QAbstractTableModel):
    def __init__(self) -> None:
        super().__init__()
        self.entries: list[InboxEntry] = []
        # the silence that holds an entry's alert now (AppAlerts sets it): its row is dimmed and says so
        self.silenced: Callable[[InboxEntry], Silence | None] = lambda _entry: None
        self._placed: dict[tuple[str, int], float] = {}  # each row's latest activity when it took its place
        self.order = (int(Col.TIME), Qt.SortOrder.DescendingOrder)  # latest activity first

    def set_entries(self, entries: list[InboxEntry]) -> None:
        self.beginResetModel()
        self.entries = self._sorted(entries)
        self._placed = {_key(e): e.alert.fired_at for e in self.entries}
        self.endResetModel()

    def update_in_place(self, entries: list[InboxEntry]) -> int:
        """The rows held still (inbox_hold.py): each listed alert repainted where it is; returns how many alerts
        wait to take their place: new ones, and listed ones that fired again and would move for it (an alert
        that fires again where it stands, the latest already, is repainted there and waits for nothing)."""
        fresh = {_key(e): e for e in entries}
        for row, e in enumerate(self.entries):
            now = fresh.get(_key(e))
            if now is not None and now != e:
                self.replace(row, now)
        new = sum(1 for key in fresh if key not in self._placed)
        again = [
            k for k in map(_key, self.entries) if k in fresh and fresh[k].alert.fired_at > self._placed[k]
        ]
        if not again:
            return new
        listed = [k for k in map(_key, self.entries) if k in fresh]
        kept = set(listed)
        then = {k: row for row, k in enumerate(listed)}
        ordered = (k for k in map(_key, self._sorted(list(fresh.values()))) if k in kept)
        target = {k: row for row, k in enumerate(ordered)}
        # it would move for its own firing: an alert listed above it would come below it
        return new + sum(1 for k in again if any(target[o] > target[k] for o in listed[: then[k]]))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """The header was clicked: order the rows by that column (the selection follows its alert)."""
        self.order = (column, order)
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        keep = [(self.entries[i.row()], i.column()) for i in before]
        self.entries = self._sorted(self.entries)
        where = {id(e): row for row, e in enumerate(self.entries)}
        self.changePersistentIndexList(before, [self.index(where[id(e)], c) for e, c in keep])
        self.layoutChanged.emit()

    def _sorted(self, entries: list[InboxEntry]) -> list[InboxEntry]:
        column, order = self.order
        now = time.time()
        descending = order == Qt.SortOrder.DescendingOrder
        return sorted(entries, key=lambda e: _sort_key(e, column, now), reverse=descending)

    def replace(self, row: int, entry: InboxEntry) -> None:
        """One alert changed (read now): repaint its row without a reset, so the selection stays."""
        self.entries[row] = entry
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(Col) - 1))

    def restyle(self) -> None:
        """Silences changed (made or lifted elsewhere, or one ended): every row is drawn again, dimmed or not."""
        if self.entries:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.entries) - 1, len(Col) - 1))

    def entry(self, row: int) -> InboxEntry | None:
        return self.entries[row] if 0 <= row < len(self.entries) else None

    def row_of(self, profile: str, alert_id: int) -> int | None:
        for row, e in enumerate(self.entries):
            if e.profile == profile and e.alert.id == alert_id:
                return row
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Col)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def data(self, index: Index, role: int = 0) -> Any:
        e = self.entry(index.row())
        if e is None:
            return None
        a, col = e.alert, index.column()
        if role == ENTRY_ROLE:
            return e
        silence = self.silenced(e) if role in _SILENCE_ROLES else None
        if role == Qt.ItemDataRole.DisplayRole:
            text = self._text(e, col)
            return f"{text} · silenced" if silence is not None and col == Col.STATE else text
        if role == Qt.ItemDataRole.FontRole and not a.read:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and silence is not None:
            return QColor(pick(DIMMED, is_dark()))
        if role == Qt.ItemDataRole.ForegroundRole and col == Col.SEVERITY:
            return QColor(pick(SEVERITY_COLORS[a.severity], is_dark()))
        if role == Qt.ItemDataRole.ToolTipRole and col == Col.ALERT:
            said = f"\nSilenced: {silence.text(time.time())}" if silence is not None else ""
            return a.detail + said
        if role == Qt.ItemDataRole.AccessibleTextRole:
            unread = "unread, " if not a.read else ""
            quiet = "silenced, " if silence is not None else ""
            return f"{unread}{quiet}{self._text(e, col)}"
        return None

    @staticmethod
    def _text(e: InboxEntry, col: int) -> str:
        a = e.alert
        if col == Col.SEVERITY:
            return SEVERITY_MARK[a.severity]
        if col == Col.ALERT:
            return ("While you were away: " if a.catch_up else "") + title(a)
        if col == Col.STATE:
            return str(a.phase(time.time())).capitalize()
        if col == Col.EVENTS:
            return f"{a.event_count:,}"
        if col == Col.TENANT:
            return e.profile
        return local_stamp(a.fired_at or a.raised_at)
