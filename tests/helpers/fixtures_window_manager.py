"""A real window manager on the worker's display, for the tests where focus and stacking are the window manager's
business: `window_manager` ("openbox" or "none", through indirect parametrization), and the X stacking order.

Without a window manager X stacks windows in the order they were mapped and raised and gives the focus only to
whoever asks; with openbox a click raises and focuses, a dialog that closes hands the focus back, and a window
marked transient for another is kept above it. The app must do the right thing either way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.slack import WAIT_SLACK, bound


def _root_property(name: str) -> str:
    return subprocess.run(["xprop", "-root", name], capture_output=True, text=True, timeout=10).stdout


def wm_running() -> bool:
    """Whether an EWMH window manager runs: the root names its check window, and that window still exists (a
    manager that quit may leave the root's property behind)."""
    _, _, ident = _root_property("_NET_SUPPORTING_WM_CHECK").partition("#")
    if not ident.strip():
        return False
    check = subprocess.run(
        ["xprop", "-id", ident.strip(), "_NET_SUPPORTING_WM_CHECK"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    return check.returncode == 0 and "window id" in check.stdout


@pytest.fixture
def window_manager(request: pytest.FixtureRequest) -> Iterator[str]:
    """`openbox` running on this worker's display for the test, or `none` (checked: no window manager at all)."""
    kind = getattr(request, "param", "openbox")
    if not os.environ.get("DISPLAY") or not shutil.which("xprop"):
        pytest.skip("needs X and xprop (run under ./run test)")
    if kind == "none":
        assert not wm_running(), "a window manager is already running on this display"
        yield kind
        return
    if not shutil.which("openbox"):
        pytest.skip("needs openbox (./run test installs it)")
    proc = subprocess.Popen(["openbox", "--sm-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + bound(20)
    while not wm_running():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("openbox did not take the display")
        time.sleep(0.05)  # fixture set-up outside Qt: waiting for an external program
    try:
        yield kind
    finally:
        proc.terminate()
        proc.wait(10)
        deadline = time.monotonic() + bound(10)
        while wm_running() and time.monotonic() < deadline:  # its check window goes with it
            time.sleep(0.05)


def stacking() -> list[int]:
    """Top-level windows, bottom to top: as the window manager stacks its clients (_NET_CLIENT_LIST_STACKING), or
    without one, the root's children in X's own order."""
    if wm_running():
        _, _, ids = _root_property("_NET_CLIENT_LIST_STACKING").partition("#")
        return [int(i.strip(), 16) for i in ids.split(",") if i.strip()]
    out = subprocess.run(
        ["xwininfo", "-root", "-children"], capture_output=True, text=True, timeout=10
    ).stdout
    # xwininfo lists the children top first: "     0x1400007 "Tenant Events": ..."
    ids = [int(line.split()[0], 16) for line in out.splitlines() if line.strip().startswith("0x")]
    return ids[::-1]


def transient_for(window_id: int) -> str:
    """WM_TRANSIENT_FOR of an X window ("" when it has none)."""
    out = subprocess.run(
        ["xprop", "-id", str(window_id), "WM_TRANSIENT_FOR"], capture_output=True, text=True, timeout=10
    ).stdout
    return "" if "not found" in out or "no such atom" in out else out.strip()


def above(widget_a: Any, widget_b: Any) -> bool:
    """Whether top-level `widget_a` is stacked above `widget_b` by the window manager."""
    order = stacking()
    a, b = int(widget_a.winId()), int(widget_b.winId())
    return a in order and b in order and order.index(a) > order.index(b)


def user_activates(widget: Any) -> None:
    """What a person does to bring a window back: with a window manager, pick it in the task bar (a pager's
    _NET_ACTIVE_WINDOW request, which the manager honours where an application's own request may be refused as
    focus stealing); without one, the app's own request is all there is."""
    if hasattr(widget, "bring_to_front"):
        widget.bring_to_front()
    else:
        widget.raise_()
        widget.activateWindow()
    if wm_running():
        # --sync: the pick is done when the manager has made the window active, as a person waits to see it
        subprocess.run(
            ["xdotool", "windowactivate", "--sync", str(int(widget.winId()))],
            capture_output=True,
            timeout=10 * WAIT_SLACK,
        )


def user_minimizes(widget: Any) -> None:
    """What a person does to put a window away: with a window manager, its title bar's minimize button (the
    manager iconifies the window; done once it has); without one, the app's own request is all there is."""
    if wm_running():
        subprocess.run(
            ["xdotool", "windowminimize", "--sync", str(int(widget.winId()))],
            capture_output=True,
            timeout=10 * WAIT_SLACK,
        )
    else:
        widget.showMinimized()
