"""Fixtures for the desktop app tests: a qasync loop, filled stores, the app itself, dunst and a tray host.

The app runs in-process on one qasync loop per test; a test is a coroutine run with `run_async(loop, coro)`
that waits on Qt signals (`signal_future`) or polls state with `until` — never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.slack import WAIT_SLACK, bound
from tenant_events.paths import AppPaths

# Offscreen-platform chatter; none of it appears under Xvfb.
QT_OFFSCREEN_NOISE = ("This plugin does not support", "QPlatformNativeInterface::systemTrayWindowChanged")
# Where tests save what they draw: an ignored folder, so a test run leaves the checkout as it was. The pictures
# in docs/screenshots/ are made on purpose by `./run screenshots`, which points this at a folder of its own.
SCREENSHOTS = Path(
    os.environ.get("TENANT_EVENTS_SCREENSHOTS")
    or Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
)


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop on the test's QApplication; errors in callbacks fail the test."""
    import qasync

    loop = qasync.QEventLoop(qapp)
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _l, ctx: errors.append(ctx))
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
    assert not errors, f"errors on the loop: {errors}"


_RUNNERS: set[asyncio.Future[Any]] = set()


def run_async(loop: asyncio.AbstractEventLoop, coro: Awaitable[Any], timeout: float = 120) -> Any:
    runner = asyncio.ensure_future(asyncio.wait_for(coro, timeout * WAIT_SLACK), loop=loop)
    _RUNNERS.add(runner)
    try:
        return loop.run_until_complete(runner)
    finally:
        _RUNNERS.discard(runner)


def other_tasks() -> list[asyncio.Task[Any]]:
    """Tasks on the loop besides the test itself (and run_async's timeout wrapper)."""
    return [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and t not in _RUNNERS]


async def until(
    predicate: Callable[[], Any], wait_s: float = 20.0, what: str | Callable[[], str] = ""
) -> Any:
    """Await `predicate()` being truthy (the async twin of qtbot.waitUntil); returns its value. `wait_s` is
    stretched by WAIT_SLACK. `what` may be a function: what is awaited, with the state it was left in."""
    deadline = time.monotonic() + wait_s * WAIT_SLACK
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(
                f"timed out after {wait_s * WAIT_SLACK:.0f} s waiting for {said or predicate}"
            )
        await asyncio.sleep(0.02)


async def remove_first_tenant(dialog: Any) -> None:
    """In Settings ▸ Tenants, select the first row and press Remove as a user does; returns once the row is gone."""
    from PySide6.QtWidgets import QPushButton

    dialog.tenant_list.setCurrentRow(0)
    remove = next(b for b in dialog.findChildren(QPushButton) if b.text() == "Remove")
    remove.click()
    await until(lambda: dialog.tenant_list.count() == 0, 20, "the row to go")


def signal_future(
    signal: Any, wait_s: float = 20.0, check: Callable[..., bool] | None = None
) -> Awaitable[tuple[Any, ...]]:
    """Connect now, await later: the next emission of a Qt signal (with args matching `check`)."""
    fut: asyncio.Future[tuple[Any, ...]] = asyncio.get_event_loop().create_future()

    def slot(*args: Any) -> None:
        if not fut.done() and (check is None or check(*args)):
            fut.set_result(args)

    signal.connect(slot)

    async def wait() -> tuple[Any, ...]:
        try:
            return await asyncio.wait_for(fut, wait_s * WAIT_SLACK)
        finally:
            signal.disconnect(slot)

    return wait()


def save_screenshot(widget: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    pixmap = widget.grab()
    assert not pixmap.isNull() and pixmap.width() > 50, f"empty screenshot of {widget}"
    assert pixmap.save(str(path)), path
    return path


@pytest.fixture
def ui_paths(tmp_path: Path) -> AppPaths:
    return AppPaths.resolve(tmp_path / "data").ensure()


@pytest.fixture
def filled_store(tmp_path: Path) -> Callable[[int], Path]:
    """Writes `n` synthetic events (types rotating over all 22) into a fresh tenant database."""
    from helpers.events_factory import row
    from tenant_events.store import Batch, StoreWriter
    from tenant_events.wire import EventType

    types = [t.value for t in EventType]

    def make(n: int, name: str = "acme") -> Path:
        path = tmp_path / f"{name}.sqlite3"
        writer = StoreWriter(path)
        try:
            for start in range(0, n, 2000):
                rows = [row(i, type_=types[i % len(types)]) for i in range(start, min(n, start + 2000))]
                writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
            writer.index_all_sync()
        finally:
            writer.close()
        return path

    return make


def _have(*tools: str) -> bool:
    return all(shutil.which(t) for t in tools)


@pytest.fixture(scope="session")
def dunst() -> Iterator[subprocess.Popen[bytes] | None]:
    """A real dunst on this session's D-Bus (needs DISPLAY and DBUS_SESSION_BUS_ADDRESS: `./run test`)."""
    if not (
        os.environ.get("DISPLAY")
        and os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        and _have("dunst", "dunstctl", "gdbus")
    ):
        pytest.skip("needs X, a session bus and dunst (run under ./run test)")
    if _notifications_owned():
        # an earlier test's notification made D-Bus activate dunst (its service file is installed): use it
        info = subprocess.run(
            [
                "gdbus",
                "call",
                "--session",
                "--dest",
                "org.freedesktop.Notifications",
                "--object-path",
                "/org/freedesktop/Notifications",
                "--method",
                "org.freedesktop.Notifications.GetServerInformation",
            ],
            capture_output=True,
            text=True,
        ).stdout
        if "dunst" not in info:
            pytest.fail(f"another notification daemon owns org.freedesktop.Notifications: {info.strip()}")
        yield None  # type: ignore[misc]
        return
    proc = subprocess.Popen(["dunst"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + bound(10)
    while not _notifications_owned():  # asking dunstctl first would D-Bus-activate a second dunst
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("dunst did not come up on the session bus")
        time.sleep(0.05)  # fixture set-up outside Qt: waiting for an external daemon
    yield proc
    proc.terminate()
    proc.wait(10)


def _notifications_owned() -> bool:
    out = subprocess.run(
        [
            "gdbus",
            "call",
            "--session",
            "--dest",
            "org.freedesktop.DBus",
            "--object-path",
            "/org/freedesktop/DBus",
            "--method",
            "org.freedesktop.DBus.NameHasOwner",
            "org.freedesktop.Notifications",
        ],
        capture_output=True,
        text=True,
    )
    return "true" in out.stdout


def dunst_displayed() -> int:
    out = subprocess.run(["dunstctl", "count", "displayed"], capture_output=True, text=True).stdout
    return int(out.strip() or 0)


@pytest.fixture
def tray_host() -> Iterator[subprocess.Popen[bytes]]:
    """trayer, a real XEmbed system tray on the Xvfb display."""
    if not (os.environ.get("DISPLAY") and _have("trayer")):
        pytest.skip("needs X and trayer (run under ./run test)")
    proc = subprocess.Popen(
        [
            "trayer",
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "24",
            "--SetDockType",
            "true",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from PySide6.QtWidgets import QSystemTrayIcon

    deadline = time.monotonic() + bound(10)
    while not QSystemTrayIcon.isSystemTrayAvailable():
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("trayer did not claim the system tray selection")
        time.sleep(0.05)
    yield proc
    proc.terminate()
    proc.wait(10)


@contextlib.asynccontextmanager
async def running_app(paths: AppPaths, **options: Any) -> AsyncIterator[Any]:
    """The real DesktopApp on the running qasync loop; quits it (and checks it ended) on exit."""
    from PySide6.QtWidgets import QApplication

    from tenant_events.problem_sink import ProblemSink
    from tenant_events.ui.app.desktop_app import AppOptions, DesktopApp

    sink = ProblemSink()
    app = DesktopApp(QApplication.instance(), paths, AppOptions(**options), sink)  # type: ignore[arg-type]
    started = signal_future(app.started, wait_s=30)
    task = asyncio.ensure_future(app.run())
    try:
        await started
        yield app
    finally:
        app.quit()
        rc = await asyncio.wait_for(task, 60)
        assert rc == 0
        app.window.close()
        app.window.deleteLater()
        if app.tray is not None:
            app.tray.menu.deleteLater()


def profile_for(sim: Any, name: str) -> Any:
    """A tenant profile pointing at a running simulator, signed in through its demo (native) client."""
    from tenant_events.settings import make_profile

    return make_profile(
        name=name,
        domain=sim.auth_url.split("//")[1],
        auth_url=sim.auth_url,
        base_url=sim.base_url,
        client_id=sim.demo_client_id,
    )
