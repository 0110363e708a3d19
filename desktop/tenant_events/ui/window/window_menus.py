"""The main window's menu bar and actions: every command is in a menu (reachable with Alt + the underlined
letter), most have a shortcut, and the shortcut cheat sheet lists them (shortcuts_help.py). The menu bar's
corner holds the two things people look for at a glance: the Follow toggle and Settings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QMenu, QMenuBar, QToolButton, QWidget

from tenant_events.ui.dialogs.shortcuts_help import ShortcutsHelp
from tenant_events.ui.window.event_actions import EventActions
from tenant_events.ui.window.filters.filter_bar import FilterBar
from tenant_events.ui.window.filters.histogram_zoom import HistogramZoom
from tenant_events.ui.window.filters.saved_filters import SavedFilters
from tenant_events.ui.window.table.columns import ColumnLayout
from tenant_events.ui.window.table.follow import FollowController
from tenant_events.ui.window.table.row_menu import RowMenu
from tenant_events.view.follow_state import Mode

Keys = str | QKeySequence.StandardKey | list[str | QKeySequence.StandardKey]
FOLLOW_TIPS: Final = {
    Mode.LIVE: "Following the newest events (F stops); scrolling down or picking a row stops it",
    Mode.READING: "Follow the newest events (F or N); back at the top with no row picked, it follows again",
    Mode.PAST: "No new events arrive in this time range: reset the zoom (Ctrl+0) to follow the newest",
}


@dataclass
class WindowActions:
    follow: QAction
    pause: QAction
    export: QAction
    settings: QAction
    shortcuts: QAction
    reset_zoom: QAction
    all: list[QAction] = field(default_factory=list)
    help_dialog: ShortcutsHelp | None = None
    corner: QWidget | None = None


class MenuWindow(Protocol):
    """What of the main window its menus command (no import of it: it imports this module)."""

    events: EventActions
    filter_bar: FilterBar
    row_menu: RowMenu
    saved_filters: SavedFilters
    follow: FollowController
    zoom: HistogramZoom
    columns: ColumnLayout

    @property
    def settings_requested(self) -> SignalInstance: ...
    @property
    def quit_requested(self) -> SignalInstance: ...
    @property
    def pause_toggled(self) -> SignalInstance: ...
    @property
    def about_requested(self) -> SignalInstance: ...
    def step(self, delta: int) -> None: ...
    def show_events(self) -> None: ...
    def show_access(self) -> None: ...
    def export_access_review(self) -> None: ...
    def window(self) -> QWidget: ...
    def menuBar(self) -> QMenuBar: ...


def build_menus(w: MenuWindow) -> WindowActions:
    top = w.window()  # the main window itself: a top-level widget is its own window()

    made: list[QAction] = []

    def add(text: str, keys: Keys | None, slot: Callable[..., Any], checkable: bool = False) -> QAction:
        action = QAction(text, top, checkable=checkable)
        if keys is not None:
            action.setShortcuts([QKeySequence(k) for k in (keys if isinstance(keys, list) else [keys])])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        top.addAction(action)
        made.append(action)
        return action

    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    export = add("&Export view…", "Ctrl+E", w.events.export_view)
    export_access = add("Export access &review…", "Ctrl+Shift+E", w.export_access_review)
    settings = add("&Settings…", "Ctrl+,", w.settings_requested.emit)
    file_menu.addActions([export, export_access, settings])
    file_menu.addSeparator()
    file_menu.addAction(add("&Quit", QKeySequence.StandardKey.Quit, w.quit_requested.emit))

    edit_menu = bar.addMenu("&Edit")
    edit_menu.addAction(add("&Search", QKeySequence.StandardKey.Find, w.filter_bar.focus_search))
    edit_menu.addAction(add("&Copy event", "Ctrl+Shift+C", w.events.copy_event))
    edit_menu.addAction(add("Copy event as &JSONL", "Ctrl+Shift+L", w.events.copy_event_jsonl))
    edit_menu.addAction(add("Event &actions…", "Shift+F10", w.row_menu.open_at_current))
    edit_menu.addSeparator()
    edit_menu.addAction(add("Save this &filter…", "Ctrl+S", w.saved_filters.ask_save))

    view_menu = bar.addMenu("&View")
    view_menu.addAction(add("&Events", "Ctrl+1", w.show_events))
    view_menu.addAction(add("&Access: who held what, what changed", "Ctrl+2", w.show_access))
    view_menu.addSeparator()
    follow = add("&Follow newest events", "F", w.follow.set_following, checkable=True)
    follow.setChecked(w.follow.following)
    w.follow.following_changed.connect(follow.setChecked)
    w.follow.mode_changed.connect(lambda mode: follow.setToolTip(FOLLOW_TIPS[mode]))
    view_menu.addAction(follow)
    view_menu.addAction(add("Jump to &newest", "N", w.follow.jump_to_newest))
    view_menu.addAction(add("Ne&xt event", "J", lambda: w.step(1)))
    view_menu.addAction(add("&Previous event", "K", lambda: w.step(-1)))
    view_menu.addSeparator()
    view_menu.addAction(add("Custom &time range…", "Ctrl+T", w.zoom.open_custom))
    reset_zoom = add("&Reset zoom", "Ctrl+0", w.zoom.reset)
    view_menu.addAction(reset_zoom)
    columns = view_menu.addMenu("C&olumns")
    columns.aboutToShow.connect(lambda: _refill(columns, w))
    view_menu.addSeparator()
    pause = add("Pa&use stream", "Ctrl+P", lambda c: w.pause_toggled.emit(c), checkable=True)
    view_menu.addAction(pause)

    help_menu = bar.addMenu("&Help")
    actions = WindowActions(follow, pause, export, settings, follow, reset_zoom, made)
    shortcuts = add("&Keyboard shortcuts", ["F1", "?"], lambda: show_shortcuts(top, actions))
    actions.shortcuts = shortcuts
    help_menu.addAction(shortcuts)
    help_menu.addSeparator()
    help_menu.addAction(add("&About Tenant Events", None, w.about_requested.emit))
    # made as the menu bar's child: setCornerWidget does not hand a parentless widget's ownership to Qt, and a
    # Python-owned widget would be freed wherever Python's collector happens to run (even a worker thread)
    actions.corner = _corner(follow, settings, bar)
    bar.setCornerWidget(actions.corner, Qt.Corner.TopRightCorner)
    return actions


def _refill(menu: QMenu, w: MenuWindow) -> None:
    menu.clear()
    w.columns.fill_menu(menu)


def _corner(follow: QAction, settings: QAction, parent: QWidget) -> QWidget:
    box = QWidget(parent)
    layout = QHBoxLayout(box)
    layout.setContentsMargins(0, 0, 6, 0)
    layout.setSpacing(4)
    for action, short, name, tip in (
        (follow, "Follow", "Follow newest events", FOLLOW_TIPS[Mode.LIVE]),
        (settings, "Settings", "Settings", "Tenants, notifications, theme, retention (Ctrl+,)"),
    ):
        action.setIconText(short)  # what a tool button shows; the menus keep the full text
        action.setToolTip(tip)
        button = QToolButton()
        button.setDefaultAction(action)
        button.setAccessibleName(name)
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        layout.addWidget(button)
    return box


def show_shortcuts(w: QWidget, actions: WindowActions) -> ShortcutsHelp:
    if actions.help_dialog is None:
        actions.help_dialog = ShortcutsHelp(actions.all, w)
    actions.help_dialog.show()
    actions.help_dialog.raise_()
    actions.help_dialog.activateWindow()
    return actions.help_dialog
