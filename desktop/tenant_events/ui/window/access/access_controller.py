"""The Access view beside the event table: asks a tenant's access history (access/review.py) on a worker thread
and shows the answer, narrowed by the filters, with how complete it is.

A reply for a tenant or moment the user has since left is dropped (a generation counter). While the view shows
"now", commits to its tenant bring the answer up to date at most every LIVE_MS. A double-click on a grant or a
change opens the event behind it in the table. The filters narrow the answer already read: no new query.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from PySide6.QtCore import QModelIndex, QObject, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QTreeView

from tenant_events.access.filters import ADMIN_LIKE, AccessFilter, roles_first_admin_like
from tenant_events.access.records import Diff, Grant, Snapshot
from tenant_events.access.review import AccessReview
from tenant_events.access.source import open_history
from tenant_events.access.summary import change_counts_line, counts_line
from tenant_events.access.words import completeness_lines, unknown_line
from tenant_events.errors import UserFixableError
from tenant_events.server_text import shown
from tenant_events.store.access_reader import AccessReader
from tenant_events.ui.look.colors import GAP_TINT
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window.access.access_models import SEQ_ROLE, snapshot_model
from tenant_events.ui.window.access.access_page import ALL, AccessPage

log = logging.getLogger(__name__)
LIVE_MS: Final = 2000
ASK_MS: Final = 250  # a moment typed digit by digit is asked once it rests


class AccessHost(Protocol):
    """What the controller uses of the main window."""

    @property
    def ui_readers(self) -> Mapping[str, Any]: ...
    @property
    def tenant(self) -> str | None: ...
    @property
    def _tasks(self) -> TaskSet: ...
    def select_event(self, tenant: str, seq: int) -> object: ...
    def show_events(self) -> None: ...


class AccessController(QObject):
    answered = Signal(object)  # the answer now shown, narrowed to the filters (a Snapshot or a Diff)

    def __init__(self, window: AccessHost, page: AccessPage) -> None:
        super().__init__()
        self.w, self.page = window, page
        self.answer: Snapshot | Diff | None = None  # as read, before the filters
        self.shown: Snapshot | Diff | None = None
        self._readers: dict[str, AccessReader] = {}
        self.known: set[str] = set()  # the window's tenants when last asked
        self._generation = 0
        self._ask = self._timer(ASK_MS, self.refresh)
        self._live = self._timer(LIVE_MS, lambda: self.refresh(live=True))
        page.fit_columns()
        for signal in (page.mode.currentIndexChanged, page.tenant_box.currentIndexChanged,
                       page.at_now.toggled, page.until_now.toggled):  # fmt: skip
            signal.connect(lambda *_a: self.refresh())
        for edit in (page.at, page.since, page.until):
            edit.dateTimeChanged.connect(lambda *_a: self._typed())
        for box in (page.role, page.organization, page.group):
            box.activated.connect(lambda *_a: self.apply_filters())
        page.user.activated.connect(lambda *_a: self.apply_filters())
        page.user_edit.editingFinished.connect(self.apply_filters)
        page.tree.doubleClicked.connect(self.open_event)
        page.to_first.clicked.connect(self._to_first)
        page.table.doubleClicked.connect(self.open_event)

    def _timer(self, ms: int, slot: Callable[[], None]) -> QTimer:
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(ms)
        timer.timeout.connect(slot)
        return timer

    # -- which tenant ------------------------------------------------------------------------------------------
    def stores(self) -> dict[str, Path]:
        return {name: r.path for name, r in self.w.ui_readers.items() if hasattr(r, "path")}

    def page_shown(self) -> None:
        """The view came to the front: offer the tenants, start on the window's, and ask."""
        box, stores = self.page.tenant_box, self.stores()
        wanted = box.currentText() if box.currentText() in stores else self.w.tenant
        box.blockSignals(True)
        box.clear()
        box.addItems(list(stores))
        box.setCurrentText(wanted or "")
        box.blockSignals(False)
        self.refresh()

    @property
    def tenant(self) -> str | None:
        name = self.page.tenant_box.currentText()
        return name if name in self.stores() else None

    def events_stored(self, tenant: str) -> None:
        if (
            self.page.isVisible()
            and tenant == self.tenant
            and self.page.follows_now()
            and not self._live.isActive()
        ):
            self._live.start()

    # -- asking ---------------------------------------------------------------------------------------------------
    def refresh(self, live: bool = False) -> None:
        """Ask again; `live`: the same question, newer events (no "Reading…", the tree kept as it is opened)."""
        self._ask.stop()
        tenant = self.tenant
        if tenant is None:
            return
        self._generation += 1
        self.known = set(self.stores())  # (read by the worker: a copy, not the window's live mapping)
        page = self.page
        if page.showing_changes:
            low, high = page.since_ms(), page.until_ms()
            if high is not None and high <= low:
                self._show_problem("“Up to” must be later than “after”: move one of them.")
                return
            ask: Callable[[AccessReview], Snapshot | Diff] = lambda review: review.diff(low, high)  # noqa: E731
        else:
            at = page.at_ms()
            ask = lambda review: review.at(at)  # noqa: E731
        if not live:
            page.counts.setText("Reading…")
        self._spawn(self._read(self._generation, tenant, self.stores()[tenant], ask, live))

    def _typed(self) -> None:
        """A moment being typed, asked once it rests: an answer still out for the question before is not shown
        under it meanwhile."""
        self._generation += 1
        self._ask.start()

    def _spawn(self, coro: Any) -> None:
        try:
            self.w._tasks.spawn(coro)
        except RuntimeError:  # no event loop (a timer fired after the app's loop closed)
            coro.close()

    def _reader(self, tenant: str, path: Path) -> AccessReader:
        """The tenant's history reader, opened once (on the worker thread that first asks); the readers of tenants
        the window no longer has are closed here, so their files are let go."""
        for gone in [name for name in self._readers if name not in self.known]:
            self._readers.pop(gone).close()
        reader = self._readers.get(tenant)
        if reader is None or reader.path != path:
            reader = self._readers[tenant] = open_history(path)
        return reader

    async def _read(
        self,
        generation: int,
        tenant: str,
        path: Path,
        ask: Callable[[AccessReview], Snapshot | Diff],
        live: bool = False,
    ) -> None:
        def work() -> Snapshot | Diff:
            return ask(AccessReview(tenant, self._reader(tenant, path)))

        try:
            answer = await asyncio.to_thread(work)
        except UserFixableError as exc:  # the file cannot be read (damaged, locked, gone): said in the view
            if generation == self._generation:
                log.info("access review of %s: %s", tenant, exc)
                self._show_problem(f"The access history of {tenant} cannot be read: {shown(str(exc), None)}")
                self.page.counts.setText("")
            return
        if generation == self._generation:
            self.answer = answer
            self.page.show_now(answer.completeness.newest_ms)
            if (
                answer.completeness.first_ms is not None
            ):  # a diff's default start: 90 days back, or the history's
                self.page.start_at(answer.completeness.first_ms, unless_chosen=True)
            self._fill_filters(answer)
            self.apply_filters(keep_open=live)

    # -- showing ------------------------------------------------------------------------------------------------
    def _fill_filters(self, answer: Snapshot | Diff) -> None:
        grants = _grants(answer)
        page = self.page
        roles = roles_first_admin_like(grants)
        _refill(
            page.role, "All roles", [("Any admin-like role", ADMIN_LIKE)] + [(r.label, r.id) for r in roles]
        )
        for box, kind, everyone in ((page.organization, "organization", "All organizations"),
                                    (page.group, "group", "All groups")):  # fmt: skip
            found = {e.id: e for g in grants if (e := getattr(g, kind)) is not None}
            _refill(
                box,
                everyone,
                sorted(((e.label, e.id) for e in found.values()), key=lambda p: p[0].casefold()),
            )
        users = {g.user.id: g.user for g in grants if g.user is not None}
        typed = page.user.currentText()
        _refill(
            page.user, "", sorted(((u.label, u.id) for u in users.values()), key=lambda p: p[0].casefold())
        )
        page.user.setEditText(typed)

    def current_filter(self) -> AccessFilter:
        page = self.page
        text = page.user.currentText().strip()
        return AccessFilter(
            page.role.currentData() or None,
            page.organization.currentData() or None,
            page.group.currentData() or None,
            text or None,
        )

    def apply_filters(self, keep_open: bool = False) -> None:
        """Show the answer narrowed to the filters; `keep_open`: the tree as the user left it (the same question,
        newer events), else opened as far as fits a screen or two."""
        answer = self.answer
        if answer is None:
            return
        flt = self.current_filter()
        narrowed = flt.snapshot(answer) if isinstance(answer, Snapshot) else flt.diff(answer)
        self.shown = narrowed
        page = self.page
        page.completeness.setText(_completeness_html(narrowed))
        tinted = bool(narrowed.completeness.gaps)
        page.completeness.setStyleSheet(
            f"background-color: rgba{GAP_TINT}; padding: 4px; font-weight: bold" if tinted else "padding: 4px"
        )
        if not narrowed.known:
            page.unknown.setText(unknown_line(narrowed))
            page.to_first.setVisible(narrowed.completeness.first_ms is not None)
            page.body.setCurrentWidget(page.not_known)
            page.counts.setText("")
        elif isinstance(narrowed, Snapshot):
            opened = _opened(page.tree) if keep_open else None
            scrolled = page.tree.verticalScrollBar().value()
            snapshot_model(narrowed, page.snapshot_model)
            if opened is None:
                page.tree.expandToDepth(0 if len(narrowed.grants) > 200 else 1)
            else:  # the same tree, newer: as the user left it
                _reopen(page.tree, opened)
                page.tree.verticalScrollBar().setValue(scrolled)
            page.body.setCurrentWidget(page.tree)
            page.counts.setText(_with_unmatched(counts_line(narrowed), flt, answer))
        else:
            page.changes_model.show(narrowed)
            page.body.setCurrentWidget(page.table)
            page.counts.setText(_with_unmatched(change_counts_line(narrowed), flt, answer))
        page.fit_columns()
        self.answered.emit(narrowed)

    def _show_problem(self, text: str) -> None:
        self.page.unknown.setText(text)
        self.page.to_first.hide()
        self.page.body.setCurrentWidget(self.page.not_known)

    def _to_first(self) -> None:
        first = self.answer.completeness.first_ms if self.answer is not None else None
        if first is not None:
            self.page.start_at(first)
            self.refresh()

    def open_event(self, index: QModelIndex) -> None:
        """Open the event behind a grant or change in the table."""
        seq, tenant = index.data(SEQ_ROLE), self.tenant
        if isinstance(seq, int) and tenant is not None:
            self.w.show_events()
            self.w.select_event(tenant, seq)

    def close(self) -> None:
        self._ask.stop()
        self._live.stop()
        self._generation += 1
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()


def _opened(tree: QTreeView) -> set[tuple[str, ...]] | None:
    """The rows the user opened, by their text from the top (None: nothing shown yet)."""
    model = tree.model()
    if model.rowCount() == 0:
        return None
    opened: set[tuple[str, ...]] = set()
    stack: list[tuple[QModelIndex, tuple[str, ...]]] = [(QModelIndex(), ())]
    while stack:
        parent, path = stack.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            if tree.isExpanded(index):
                here = (*path, _name(index, path))
                opened.add(here)
                stack.append((index, here))
    return opened


def _name(index: QModelIndex, path: tuple[str, ...]) -> str:
    """A row's text; a heading's without its count, which changes while its name does not."""
    text = str(index.data())
    return text.split(" (", 1)[0] if not path else text


def _reopen(tree: QTreeView, opened: set[tuple[str, ...]]) -> None:
    model = tree.model()
    stack: list[tuple[QModelIndex, tuple[str, ...]]] = [(QModelIndex(), ())]
    while stack:
        parent, path = stack.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            here = (*path, _name(index, path))
            if here in opened:
                tree.setExpanded(index, True)
                stack.append((index, here))


def _grants(answer: Snapshot | Diff) -> list[Grant]:
    return list(answer.grants) if isinstance(answer, Snapshot) else [c.grant for c in answer.changes]


def _refill(box: QComboBox, everything: str, entries: list[tuple[str, str]]) -> None:
    """The box's entries anew, keeping the one chosen when it is still there."""
    chosen = box.currentData()
    box.blockSignals(True)
    box.clear()
    if everything:
        box.addItem(everything, ALL)
    for label, data in entries:
        box.addItem(label, data)
    at = box.findData(chosen) if chosen else -1
    box.setCurrentIndex(max(at, 0) if everything else at)
    box.blockSignals(False)


def _with_unmatched(counts: str, flt: AccessFilter, answer: Snapshot | Diff) -> str:
    missing = flt.unmatched(_grants(answer))
    return f"{counts} — {', '.join(missing)} here" if missing else counts


def _completeness_html(answer: Snapshot | Diff) -> str:
    return "<br>".join(html.escape(shown(line, None)) for line in completeness_lines(answer.completeness))
