"""Suite-wide settings: Qt offscreen unless the session has an X display; shared fixtures from tests/helpers.

Each area keeps its shared fixtures in `tests/helpers/fixtures_<area>.py`; every such module is loaded here
as a plugin, so areas add fixtures without editing this file.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")
os.environ.setdefault("QT_API", "pyside6")

pytest_plugins = sorted(
    f"helpers.{p.stem}" for p in (Path(__file__).parent / "helpers").glob("fixtures_*.py")
)
