"""Suite-wide settings: Qt offscreen unless a test session provides Xvfb, isolated app dirs."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")
os.environ.setdefault("QT_API", "pyside6")
