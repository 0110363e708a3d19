"""A lazy, virtual table over one tenant's stored events, newest first.

Nothing per row is kept for the whole set: the model knows a row count and a `head` (the newest `seq`
included), and fetches pages of `PAGE` rows from the store on demand, holding at most `MAX_PAGES` of them.
Row r is the r-th newest event with `seq <= head` that matches the filter, so it is stable until `head` moves.
Possible-gap markers are rows of their own, interleaved: a short sorted list of (matching events newer than the
gap, reason). New events arrive through `advance_head()`: one `beginInsertRows(0, n-1)`, which Qt maps onto the
selection and persistent indexes, so the row being read keeps its identity (main_window.py keeps it in place).
Filtering runs in the store (indexes, FTS5); which pages are held and how one is read: view/page_cache.py.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QFont

from tenant_events.entities.page_names import PageNames
from tenant_events.ui.look.theme import family_color, is_dark, stripe, tenant_color
from tenant_events.ui.window.background_reads import read_in_background
from tenant_events.ui.window.table.time_text import local_time, utc_tooltip
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view.page_cache import KEPT_HEADS, MAX_PAGES, PAGE, Found, PageCache, RecentHeads
from tenant_events.view.tenant_reader import TenantReader

__all__ = ["KEPT_HEADS", "MAX_PAGES", "PAGE", "EventTableModel", "local_time", "utc_tooltip"]

ALL = EventFilter()
Index = QModelIndex | QPersistentModelIndex


class Col(IntEnum):
    TIME = 0
    TYPE = 1
    SUMMARY = 2
    TENANT = 3
    PURPOSE = 4
    ID = 5


HEADERS = {
    Col.TIME: "Time",
    Col.TYPE: "Type",
    Col.SUMMARY: "Summary",
    Col.TENANT: "Tenant",
    Col.PURPOSE: "Purpose",
    Col.ID: "Event ID",
}
SEQ_ROLE = Qt.ItemDataRole.UserRole + 1
EVENT_ROLE = Qt.ItemDataRole.UserRole + 2
SENTENCE_ROLE = Qt.ItemDataRole.UserRole + 3  # the Summary's Sentence (names as mentions), when known
_FIELD = {Col.TYPE: "type", Col.SUMMARY: "summary", Col.TENANT: "tenant", Col.ID: "event_id"}  # shown as is
GONE = (".deleted", ".removed")  # types shown bold
_ROLE = Qt.ItemDataRole
# the roles data() answers (an event row's or a possible-gap row's); any other returns before a row is read
ANSWERED: frozenset[int] = frozenset(
    (_ROLE.DisplayRole, _ROLE.ToolTipRole, _ROLE.ForegroundRole, _ROLE.FontRole, _ROLE.BackgroundRole)
) | {_ROLE.AccessibleTextRole, SEQ_ROLE, EVENT_ROLE, SENTENCE_ROLE}


class EventTableModel(QAbstractTableModel):
    rows_arrived = Signal(int)  # how many new rows were inserted at the top
    count_needed = Signal(int)  # generation whose total is still to be counted (see reload)

    def __init__(self, reader: TenantReader | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self._reader = reader
        self._filter = EventFilter()
        self._cache = PageCache()
        # summary sentences, made per page read (entities/page_names.py), on the window's read threads
        self.names = PageNames(run=read_in_background)
        self._cache.on_page = self.names.page_read
        self.names.on_ready = self._summaries_changed
        self.generation = 0  # bumped by every reload: a count made for an older snapshot is dropped
        self._added_at = RecentHeads()  # head → rows added at the top before it (this generation)
        self._added = 0
        self._gaps: list[tuple[int, str]] = []  # (matching events above the gap, reason), sorted
        self._gap_brush = QColor(232, 163, 23, 70)
        self._bold = QFont()
        self._bold.setBold(True)

    # -- state -------------------------------------------------------------------------------------------
    @property
    def event_filter(self) -> EventFilter:
        return self._filter

    @property
    def head(self) -> int:
        return self._cache.head

    @property
    def _rows(self) -> int:
        return self._cache.rows

    @property
    def counting(self) -> bool:
        """The row count is provisional (first page only) until apply_total."""
        return self._cache.counting

    def set_reader(
        self,
        reader: TenantReader | None,
        flt: EventFilter | None = None,
        read: bool = True,
        count_later: bool = False,
    ) -> None:
        """`count_later` as in `reload`."""
        self._reader = reader
        self.names.clear(reader.directory() if reader is not None else None)
        self._filter = self._filter if flt is None else flt
        if read:
            self.reload(count_later)
        else:  # no rows until show_first_page: a query's first page is read on a worker (first_page.py)
            self._reset(0, [])

    def set_filter(self, flt: EventFilter, count_later: bool = False) -> None:
        if flt != self._filter:
            self._filter = flt
            self.reload(count_later)

    def reload(self, count_later: bool = False) -> None:
        """Full reset: new filter or reader (CONTRIBUTING.md "Style": reset only on full reload).

        `count_later`: show the first page at once and leave the total to `apply_total` (the caller counts on
        a worker thread; counting a million matches takes far longer than finding the newest 256).
        """
        head = 0 if self._reader is None else self._reader.head_seq()
        first = None
        if self._reader is not None and count_later:
            first = self._reader.page(self._filter, head, 0, PAGE)
        self._reset(head, first)

    def show_first_page(
        self, flt: EventFilter, head: int, first: list[StoredEvent], counted: tuple[int, int] | None = None
    ) -> None:
        """`flt`'s first page at `head`, read on a worker (first_page.py); the total follows (`count_needed`),
        unless the worker `counted` it too (the total and the oldest match: an event opened deep in it)."""
        self._filter = flt
        self._reset(head, first, counted)

    def _reset(
        self, head: int, first: list[StoredEvent] | None, counted: tuple[int, int] | None = None
    ) -> None:
        """`first`: the first page, the total left to `apply_total` unless `counted`; None: counted now."""
        self.beginResetModel()
        cache = self._cache
        self._added_at, self._added = RecentHeads(), 0
        self._gaps = []
        self.generation += 1
        cache.counting = False
        cache.reset(self._reader, self._filter, head)
        if self._reader is None:
            cache.rows = 0
        elif first is not None:
            cache.pages[0], cache.rows = first, len(first)
            self.names.page_read(first)  # a page read elsewhere (a query's, on a worker) gets its names too
            cache.counting = counted is None and len(first) == PAGE
            if counted is not None:
                cache.rows = counted[0]
                cache.warm_oldest(counted[1])
        else:
            cache.rows = self._reader.count(self._filter, cache.head)
        self._added_at[cache.head] = 0
        self.endResetModel()
        if self.counting:
            self.count_needed.emit(self.generation)

    def apply_total(self, generation: int, total: int, oldest: int | None = None) -> None:
        """The full count for `generation`'s snapshot arrived (and its oldest match): the rows appear below."""
        if generation != self.generation or not self.counting:
            return
        if oldest is not None:
            self._cache.warm_oldest(oldest)
        self._cache.counting = False
        if total > self._rows:
            shown = self.rowCount()
            self.beginInsertRows(QModelIndex(), shown, shown + total - self._rows - 1)
            self._cache.rows = total
            self.endInsertRows()

    def advance_head(self) -> int:
        """Synchronously insert the events stored since the last call at the top (rare paths; the live path
        counts on a worker thread and calls `apply_advance`)."""
        if self._reader is None:
            return 0
        new_head = self._reader.head_seq()
        if new_head <= self.head:
            return 0
        return self.apply_advance(
            new_head, self._reader.count_new(self._filter, self.head, self._rows, new_head)
        )

    def apply_advance(self, new_head: int, added: int) -> int:
        """Show `added` new rows at the top, up to `new_head`; negative means retention removed rows: reload."""
        if added < 0:
            self.reload()
            return 0
        if added == 0:
            self._cache.head = max(self.head, new_head)
            self._added_at[self.head] = self._added
            return 0
        self.beginInsertRows(QModelIndex(), 0, added - 1)
        self._cache.shifted(new_head, added)  # row numbers moved; only visible pages get read again
        self._gaps = [(above + added, reason) for above, reason in self._gaps]  # new rows go above every gap
        self._added += added
        self._added_at[self.head] = self._added
        self.endInsertRows()
        self.rows_arrived.emit(added)
        return added

    def added_since(self, head: int) -> int | None:
        """Rows inserted on top since snapshot `head` (None: a snapshot no longer known, or another filter's)."""
        return self._added - self._added_at[head] if head in self._added_at else None

    @property
    def event_rows(self) -> int:
        """Rows that are events (rowCount() less the gap rows)."""
        return self._rows

    def set_gaps(self, head: int, gaps: list[tuple[int, str]]) -> bool:
        """Show possible-gap rows: `gaps` = (matching events stored after the gap up to `head`, reason).

        Counted on a worker for the snapshot `head`; rows inserted on top since then are allowed for. True when
        the gap rows changed. Old gap rows are removed and new ones inserted (rarely changes), so event rows and
        the selection keep their identity.
        """
        shift = self.added_since(head)  # rows inserted on top since `head`: the gaps moved down
        if shift is None or self.counting:
            return False
        new = sorted((p + shift, reason) for p, reason in gaps if 0 <= p + shift <= self._rows)
        if new == self._gaps:
            return False
        for k in range(len(self._gaps) - 1, -1, -1):
            row = self._gaps[k][0] + k
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._gaps[k]
            self.endRemoveRows()
        for k, gap in enumerate(new):
            row = gap[0] + k
            self.beginInsertRows(QModelIndex(), row, row)
            self._gaps.append(gap)
            self.endInsertRows()
        return True

    @property
    def has_anchors(self) -> bool:
        return bool(self._cache.anchors)

    def set_anchors(self, generation: int, head: int, anchors: list[int]) -> bool:
        """Keys for deep pages (`seq_anchors` of the filter at snapshot `head`, every PAGE rows), counted on a
        worker; rows added since `head` are allowed for. Dropped if the filter changed meanwhile."""
        shift = self.added_since(head)  # None: an unknown snapshot, the next pass computes fresh anchors
        if generation != self.generation or shift is None:
            return False
        self._cache.anchors, self._cache.anchor_shift = anchors, shift
        if self._cache.approx:
            self._settle_estimates()
        return True

    def _settle_estimates(self) -> None:
        """The page keys arrived: estimated pages are read again exactly, and persistent indexes (the
        selection, the current row) move to where their events really are."""
        self.layoutAboutToBeChanged.emit()
        moves: list[tuple[QModelIndex, int | None]] = []
        for index in self.persistentIndexList():
            row, gap = self._locate(index.row()) if self._gaps else (index.row(), None)
            seq = None if gap is not None else self._cache.estimated_seq_at(row)
            if seq is not None:
                moves.append((index, self._cache.exact_row(seq)))
        self._cache.settle()
        for index, moved in moves:
            self.changePersistentIndex(
                index, QModelIndex() if moved is None else self.index(self.display_row(moved), index.column())
            )
        self.layoutChanged.emit()

    def gap_rows(self) -> list[int]:
        """Display rows of the possible-gap rows, top to bottom."""
        return [above + k for k, (above, _) in enumerate(self._gaps)]

    def gap_at(self, row: int) -> str | None:
        """The reason if display `row` is a possible-gap row."""
        return self._locate(row)[1]

    def _locate(self, row: int) -> tuple[int, str | None]:
        """Display row → (event row, None) or (-1, gap reason)."""
        for k, (above, reason) in enumerate(self._gaps):
            at = above + k
            if row == at:
                return -1, reason
            if row < at:
                return row - k, None
        return row - len(self._gaps), None

    def display_row(self, event_row: int) -> int:
        """Event row → display row (a gap with `above` == n sits just above event row n)."""
        return event_row + sum(1 for above, _ in self._gaps if above <= event_row)

    def event_at(self, row: int) -> StoredEvent | None:
        """The event shown at display `row` (None for a gap row or out of range)."""
        if self._gaps:
            row, gap = self._locate(row)
            if gap is not None:
                return None
        return self._cache.event(row)

    def row_of_seq(self, seq: int) -> int | None:
        """The row showing event `seq` under the current filter, or None if it is filtered out; counted here (Qt
        events outside the asyncio loop: tests between loop runs), else on a worker (event_selection.py)."""
        if self._reader is None or seq > self.head:
            return None
        newer = self._reader.count(self._filter, self.head, min_seq=seq + 1)
        if newer < self._rows:
            self._cache.place(newer, seq)  # the count is exact: so must the page at that row be
        return self._row_if(newer, seq)

    def place_found(self, found: Found, seq: int) -> int | None:
        """What a worker's `page_cache.find` read of event `seq` in the snapshot shown: its row, or None."""
        if found[0] < self._rows:
            self._cache.keep_found(*found)
        return self._row_if(found[0], seq)

    def _row_if(self, row: int, seq: int) -> int | None:
        ev = self._cache.event(row)
        return self.display_row(row) if ev is not None and ev.seq == seq else None

    # -- Qt model API ------------------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self._rows + len(self._gaps)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(Col)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        # Never `super().headerData`: PySide 6.12 on 3.11 loses a reference to None per empty QVariant, until Python aborts.
        shown = orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
        return HEADERS[Col(section)] if shown and 0 <= section < len(Col) else None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # half of what a paint asks of each cell (alignment, check state, decoration…) is answered by no row
        if role not in ANSWERED or not index.isValid() or index.column() >= len(Col):
            return None
        col = Col(index.column())
        row, gap = self._locate(index.row()) if self._gaps else (index.row(), None)
        if gap is not None:
            return self._gap_data(gap, col, role)
        if role == Qt.ItemDataRole.BackgroundRole:  # (a possible-gap row has its own)
            return stripe(index.row() - self._added)
        ev = self._cache.event(row)
        if ev is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.names.text(ev) if col == Col.SUMMARY else self._display(ev, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            if col == Col.TIME:
                return utc_tooltip(ev.time)
            return self.names.tooltip(ev) if col == Col.SUMMARY else self._display(ev, col)
        if role == SENTENCE_ROLE:
            return self.names.sentence(ev.seq)
        if role == Qt.ItemDataRole.ForegroundRole and col in (Col.TYPE, Col.TENANT):
            return QColor(family_color(ev.family, is_dark())) if col == Col.TYPE else tenant_color(ev.tenant)
        if role == Qt.ItemDataRole.FontRole and col == Col.TYPE and ev.type.endswith(GONE):
            return self._bold
        if role == SEQ_ROLE:
            return ev.seq
        if role == EVENT_ROLE:
            return ev.event_id
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{self._display(ev, Col.TYPE)}, {self.names.text(ev)}, {local_time(ev.time)}"
        return None

    def _summaries_changed(self) -> None:
        """Names arrived from the worker (page_names.py): the view repaints the column's visible cells."""
        if self.rowCount():
            self.dataChanged.emit(self.index(0, Col.SUMMARY), self.index(self.rowCount() - 1, Col.SUMMARY))

    def _gap_data(self, reason: str, col: Col, role: int) -> Any:
        """A possible-gap row: tinted, says what happened in the summary column."""
        if role == Qt.ItemDataRole.DisplayRole:
            if col == Col.TYPE:
                return "⚠ possible gap"
            return f"Events may be missing here: {reason}" if col == Col.SUMMARY else ""
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._gap_brush
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"Possible gap: events may be missing between the rows above and below ({reason})"
        if role == Qt.ItemDataRole.FontRole:
            return self._bold
        return None

    @staticmethod
    def _display(ev: StoredEvent, col: Col) -> str:
        if col == Col.TIME:
            return local_time(ev.time)
        return (ev.purpose or "") if col == Col.PURPOSE else str(getattr(ev, _FIELD[col]))
