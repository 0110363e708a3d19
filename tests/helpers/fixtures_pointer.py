"""The X pointer parked in the screen's corner before each GUI test.

Xvfb starts the pointer at the screen's centre, which is where a test's window (1600 × 900 at the origin) has
its table: the table then holds still under the pointer while events arrive, as it does for a person (follow.py).
A test that wants the pointer over a widget puts it there itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _pointer_in_the_corner(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("gui") is None:
        yield
        return
    request.getfixturevalue("qapp")
    from PySide6.QtGui import QCursor, QGuiApplication

    screen = QGuiApplication.primaryScreen()
    if screen is not None and QGuiApplication.platformName() == "xcb":
        corner = screen.geometry().bottomRight()
        QCursor.setPos(screen, corner)
    yield
