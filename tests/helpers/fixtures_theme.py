"""The application's palette put back after each Qt test.

The tests of a worker share one QApplication. A test that starts the app with the dark theme in its settings (or
applies a theme itself) would leave the whole application dark, and a later test on that worker — whichever the
scheduler gives it — would then find the dark theme's colours where it checks the light ones.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _palette_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    if not {"qapp", "qtbot", "qloop"} & set(request.fixturenames):
        yield
        return
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    app = request.getfixturevalue("qapp")
    found = QPalette(app.palette())
    yield
    if QApplication.instance() is app and app.palette() != found:
        app.setPalette(found)
