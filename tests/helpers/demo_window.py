"""The real app on the demo tenant for the window tests that read while events arrive: sign-in through the
simulator's login page, the backlog in the table, a click delivered at once, the real pointer moved."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QCursor, QMouseEvent
from PySide6.QtWidgets import QApplication

from helpers.browser import act_as_browser
from helpers.fixtures_ui import until

DEMO_ARGS = ["--seed", "11", "--rate", "25", "--backlog", "300", "--heartbeat", "0.5", "--ephemeral"]
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def click(widget: Any, pos: QPoint) -> None:
    """A left click delivered to the widget's event handlers now. (qtbot.mouseClick spins the event loop, which
    would re-enter the qasync loop from inside this test's coroutine.)"""
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        event = QMouseEvent(
            kind,
            QPointF(pos),
            QPointF(widget.mapToGlobal(pos)),
            Qt.MouseButton.LeftButton,
            Qt.MouseButton.LeftButton if kind == QEvent.Type.MouseButtonPress else Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(widget, event)


INCIDENTS = (  # each raises an alert of another rule (act_out)
    ("mass_deletion", {"n": 25, "over_s": 1}),
    ("account_link", {"over_s": 1}),
    ("shared_phone", {"n": 3, "over_s": 1}),
    ("org_deleted", {}),
    ("signup_wave", {"n": 25, "over_s": 2}),
    ("admin_group_member", {"over_s": 1}),
)
QUIET_DEMO_ARGS = ["--seed", "11", "--rate", "2", "--backlog", "20", "--heartbeat", "0.5", "--ephemeral"]


async def demo_window(app: Any, size: tuple[int, int] = (1600, 900), rows: int = 300) -> Any:
    """The demo signed in, its backlog (`rows`) in the table, the window at `size` and active."""
    w = app.window
    await until(lambda: "demo" in app.sessions and app.sessions["demo"].is_signed_in, 60, "sign-in")
    await until(lambda: w.tenant == "demo" and w.model.rowCount() >= rows, 30, "backlog rows")
    w.resize(*size)
    w.bring_to_front()
    await until(w.isActiveWindow, 10, "the window active")
    return w


async def pointer_to(widget: Any, pos: QPoint | None) -> None:
    """Move the real pointer over `widget` at `pos` (None: well away from the window) and let the events in."""
    if pos is None:
        QCursor.setPos(QPoint(2, 1020))
    else:
        QCursor.setPos(widget.mapToGlobal(pos))
    for _ in range(3):
        await asyncio.sleep(0.05)  # the X server's enter and leave events reach the loop


async def act_out(app: Any, kind: str, **options: Any) -> None:
    """Have the demo's simulator act out an incident now (POST /_sim/scenario); returns once it was."""
    import httpx

    sim = app.first_run.simulator
    assert sim is not None, "the demo's simulator is not running"
    url = f"{sim.auth_url}/_sim/scenario"

    def post() -> None:
        httpx.post(url, json={"do": kind, **options}, timeout=120).raise_for_status()

    await asyncio.to_thread(post)


def demo_app(paths: Any, simulator_args: list[str] = DEMO_ARGS) -> Any:
    """The real app on the demo tenant (a `running_app` context): signed in through the simulator's login page,
    its sign-in kept in memory."""
    from helpers.fixtures_ui import running_app
    from tenant_events.auth.secret_store import MemorySecretStore

    return running_app(
        paths, demo=True, opener=browser, secret_store=MemorySecretStore(), simulator_args=simulator_args
    )
