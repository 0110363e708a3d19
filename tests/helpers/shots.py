"""Screenshots a person looks at, kept out of the repository: $TENANT_EVENTS_SHOTS or /tmp/desktop-shots."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def shots_dir() -> Path:
    path = Path(os.environ.get("TENANT_EVENTS_SHOTS", "/tmp/desktop-shots"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def shot(widget: Any, name: str) -> Path:
    """Grab `widget` into <shots>/<name>.png; an empty grab fails the test."""
    path = shots_dir() / f"{name}.png"
    pixmap = widget.grab()
    assert not pixmap.isNull() and pixmap.width() > 50, f"empty screenshot of {widget}"
    assert pixmap.save(str(path)), path
    return path
