"""Object timelines in the main window: the names in the table, the detail pane and the row menu open a
timeline pane beside the detail pane, with back and forward (Alt+Left, Alt+Right).

Timelines are read on a worker thread (entities/timeline_pages.py over every tenant's database); a reply for an
object the user has already left is dropped. The window only constructs this; everything else is wired here.
"""

from __future__ import annotations

import asyncio
import html
import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Protocol
from urllib.parse import quote, unquote

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QSplitter, QTableView, QVBoxLayout

from tenant_events.entities.objects import ObjectSpec
from tenant_events.entities.sentences import Mention, Sentence
from tenant_events.entities.timeline_pages import History, TimelineScreen, TimelineSource
from tenant_events.ui.look.link_label import LinkLabel
from tenant_events.ui.task_set import TaskSet
from tenant_events.ui.window.detail_pane import DetailPane
from tenant_events.ui.window.table.event_table_model import SENTENCE_ROLE, Col, EventTableModel
from tenant_events.ui.window.table.row_menu import RowMenu
from tenant_events.ui.window.timeline.sentence_delegate import SentenceDelegate
from tenant_events.ui.window.timeline.timeline_model import TimelineCol
from tenant_events.ui.window.timeline.timeline_pane import TimelinePane
from tenant_events.values.events import StoredEvent
from tenant_events.view.tenant_reader import TenantReader


class TimelineHost(Protocol):
    """What the controller uses of the main window."""

    table: QTableView
    model: EventTableModel
    splitter: QSplitter
    detail: DetailPane
    row_menu: RowMenu

    @property
    def tenant(self) -> str | None: ...
    @property
    def ui_readers(self) -> Mapping[str, object]: ...
    @property
    def _tasks(self) -> TaskSet: ...
    def select_event(self, tenant: str, seq: int) -> object: ...
    def installEventFilter(self, watched: QObject) -> None: ...
    def addAction(self, action: QAction) -> None: ...


log = logging.getLogger(__name__)
SCHEME = "timeline"


def mention_link(tenant: str, mention: Mention) -> str:
    """An href naming a mention: `timeline:tenant/kind/id` (parts quoted)."""
    return f"{SCHEME}:{quote(tenant, safe='')}/{mention.kind}/{quote(mention.id, safe='')}"


def parse_link(href: str) -> tuple[str, Mention] | None:
    scheme, _, rest = href.partition(":")
    parts = rest.split("/")
    if scheme != SCHEME or len(parts) != 3:
        return None
    tenant, kind, entity_id = unquote(parts[0]), parts[1], unquote(parts[2])
    return tenant, Mention(kind, entity_id, entity_id)


def sentence_html(tenant: str, sentence: Sentence) -> str:
    """The sentence with each name as a link (its raw id in the link's tooltip is the href)."""
    out = []
    for part in sentence.parts:
        if isinstance(part, Mention):
            out.append(f'<a href="{html.escape(mention_link(tenant, part))}">{html.escape(part.label)}</a>')
        else:
            out.append(html.escape(part))
    return "".join(out)


class TimelineController(QObject):
    def __init__(self, window: TimelineHost) -> None:
        super().__init__()
        self.w = window
        self.pane = TimelinePane()
        self.pane.hide()
        self.history = History()
        self.source: TimelineSource | None = None
        self.screen: TimelineScreen | None = None
        self._generation = 0
        self._sizes_before: list[int] | None = None  # the splitter's sizes before the pane opened
        self._place_pane()
        self.delegate = SentenceDelegate(window.table)
        window.table.setItemDelegateForColumn(Col.SUMMARY, self.delegate)
        self.delegate.mention_clicked.connect(self._table_mention)
        self.names = LinkLabel()  # the detail pane's sentence, names as links (in the theme's link colour)
        self.names.setAccessibleName("Who and what")
        self.names.setWordWrap(True)
        self.names.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.names.linkActivated.connect(self.open_link)
        self.names.hide()
        detail_layout = window.detail.layout()
        assert isinstance(detail_layout, QVBoxLayout)
        detail_layout.insertWidget(1, self.names)
        window.detail.emptied.connect(
            self.names.hide
        )  # the pane cleared without a row chosen (a filter hid it)
        window.table.selectionModel().currentRowChanged.connect(self._current_changed)
        window.model.dataChanged.connect(lambda *_a: self._current_changed(window.table.currentIndex()))
        window.row_menu.extras.append(self._menu_entries)
        window.model.names.keep_task = self._keep
        self.pane.back_requested.connect(self.back)
        self.pane.forward_requested.connect(self.forward)
        self.pane.close_requested.connect(self.close_pane)
        self.pane.entry_opened.connect(self.open_entry)
        self.pane.mention_clicked.connect(self.open_mention)
        self.pane.model.more_wanted.connect(self._more)
        for keys, slot in (("Alt+Left", self.back), ("Alt+Right", self.forward)):
            action = QAction(self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            action.triggered.connect(slot)
            window.addAction(action)

    def _place_pane(self) -> None:
        """The pane goes with the detail pane: above it in a wide window, beside it in a narrow one."""
        w = self.w
        self.side = QSplitter(Qt.Orientation.Vertical)
        at = w.splitter.indexOf(w.detail)
        self.side.addWidget(self.pane)
        w.splitter.replaceWidget(at, self.side)
        self.side.addWidget(w.detail)
        self.side.setStretchFactor(0, 3)
        self.side.setStretchFactor(1, 2)
        w.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:  # only the window is watched
            QTimer.singleShot(0, self.follow_orientation)  # after the window turned its splitter
        return False

    def follow_orientation(self) -> None:
        wanted = (
            Qt.Orientation.Horizontal
            if self.w.splitter.orientation() == Qt.Orientation.Vertical
            else Qt.Orientation.Vertical
        )
        if self.side.orientation() != wanted:
            self.side.setOrientation(wanted)

    # -- where names are clicked -------------------------------------------------------------------------
    def _table_mention(self, _index: QModelIndex, mention: Mention) -> None:
        if self.w.tenant is not None:
            self.open_mention(self.w.tenant, mention)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex | None = None) -> None:
        sentence = current.siblingAtColumn(Col.SUMMARY).data(SENTENCE_ROLE) if current.isValid() else None
        self.show_names(self.w.tenant, sentence if isinstance(sentence, Sentence) else None)
        ev = self.w.model.event_at(current.row()) if current.isValid() else None
        if ev is not None and isinstance(sentence, Sentence):
            self.w.detail.name_summary(ev.seq, sentence.text)

    def show_names(self, tenant: str | None, sentence: Sentence | None) -> None:
        """The detail pane's line of names (hidden when the event names nobody)."""
        if tenant is None or sentence is None or not sentence.mentions:
            self.names.hide()
            return
        self.names.setText(sentence_html(tenant, sentence))
        self.names.setToolTip("Click a name to see its timeline")
        self.names.show()

    def _menu_entries(self, menu: QMenu, index: QModelIndex, _ev: StoredEvent) -> None:
        sentence = index.siblingAtColumn(Col.SUMMARY).data(SENTENCE_ROLE)
        if self.w.tenant is not None and isinstance(sentence, Sentence):
            add_timeline_entries(menu, self.w.tenant, sentence, self.open_mention)

    def open_link(self, href: str) -> None:
        found = parse_link(href)
        if found is not None:
            self.open_mention(*found)

    # -- showing timelines ----------------------------------------------------------------------------------
    def open_mention(self, tenant: str, mention: Mention) -> None:
        """A user known by email is followed by email, so the timeline spans every tenant where that address is a
        user (ids differ between tenants); anything else by its id."""
        if mention.kind == "user" and "@" in mention.label:
            self.open(ObjectSpec("email", mention.label))
        else:
            self.open(ObjectSpec(mention.kind, mention.id))

    def open(self, spec: ObjectSpec) -> None:
        self.history.visit(spec)
        self._show(spec)

    def back(self) -> None:
        spec = self.history.back()
        if spec is not None:
            self._show(spec)

    def forward(self) -> None:
        spec = self.history.forward()
        if spec is not None:
            self._show(spec)

    def close_pane(self) -> None:
        """Hide the timeline; the table gets back the width it had before the pane opened."""
        self.pane.hide()
        if self._sizes_before is not None:
            self.w.splitter.setSizes(self._sizes_before)
            self._sizes_before = None

    def open_entry(self, tenant: str, seq: int) -> None:
        self.w.select_event(tenant, seq)

    def _stores(self) -> dict[str, Any]:
        return {name: r.path for name, r in self.w.ui_readers.items() if isinstance(r, TenantReader)}

    def _source(self) -> TimelineSource:
        stores = self._stores()
        if self.source is None or self.source.stores != stores:
            if self.source is not None:
                self.source.close()
            self.source = TimelineSource(stores)
        return self.source

    def _show(self, spec: ObjectSpec) -> None:
        self.pane.set_history(self.history.can_back, self.history.can_forward)
        if not self.pane.isVisible():
            self._sizes_before = self.w.splitter.sizes()
            self.pane.show()
            self.follow_orientation()
            sizes = self.w.splitter.sizes()  # room for sentences: the side gets nearly half
            self.w.splitter.setSizes([sum(sizes) * 11 // 20, sum(sizes) * 9 // 20])
            side = self.side.sizes()  # and the timeline most of the side
            self.side.setSizes([sum(side) * 3 // 5, sum(side) * 2 // 5])
        self.pane.table.setColumnHidden(TimelineCol.TENANT, len(self.w.ui_readers) < 2)
        self.pane.show_loading(str(spec))
        self._generation += 1
        self._spawn(self._load(spec, self._generation))

    def _spawn(self, coro: Any) -> None:
        try:
            self.w._tasks.spawn(coro)
        except RuntimeError:  # no event loop (after the app's loop closed)
            coro.close()

    def _keep(self, task: asyncio.Task[Any]) -> None:
        """The window awaits its tasks at shutdown, before the readers close."""
        self.w._tasks.keep(task)

    async def _load(self, spec: ObjectSpec, generation: int) -> None:
        source = self._source()
        screen = await asyncio.to_thread(source.first, spec)
        if generation != self._generation:
            return
        self.screen = screen
        self.pane.show_screen(screen)
        lines = await asyncio.to_thread(source.state, screen)
        if generation == self._generation:
            self.pane.show_state(lines)

    def _more(self) -> None:
        if self.screen is not None and self.source is not None:
            self._spawn(self._read_more(self.source, self.screen, self._generation))

    async def _read_more(self, source: TimelineSource, screen: TimelineScreen, generation: int) -> None:
        rows = await asyncio.to_thread(source.more, screen)
        if generation == self._generation and screen is self.screen:
            self.pane.model.append(rows, screen.done)
            self.pane.show_count()

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
            self.source = None


def add_timeline_entries(
    menu: QMenu, tenant: str, sentence: Sentence, open_it: Callable[[str, Mention], None]
) -> None:
    """ "Timeline of …" for every name in the sentence (the row menu's last section)."""
    mentions = list(dict.fromkeys(sentence.mentions))
    if not mentions:
        return
    menu.addSeparator()
    for mention in mentions:
        menu.addAction(f"Timeline of {mention.kind} {mention.label}", partial(open_it, tenant, mention))
