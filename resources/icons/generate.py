"""Writes the SVG masters of the app and tray icons and renders their PNG sizes (run after editing).

    .venv/bin/python resources/icons/generate.py

Tray icons: one monochrome "pulse" glyph per panel kind (dark glyph for light panels, light glyph for dark
panels) plus a coloured state badge, so the state reads on either panel (desktops draw their panels light or
dark).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
TRAY_SIZES = (16, 22, 24, 32, 44, 48, 64)
PULSE = "M6 36 H20 L26 18 L34 50 L40 30 L44 36 H58"

# state -> (badge fill, badge mark); the mark keeps states apart without colour (colour-blind users).
STATES: dict[str, tuple[str, str]] = {
    "live": ("#22a45d", ""),
    "catching-up": ("#2f7de1", '<path d="M44 50 l6 -6 l6 6" fill="none" stroke="#fff" stroke-width="3"/>'),
    "reconnecting": (
        "#e8a317",
        '<path d="M45 47 a5 5 0 1 0 5 -5" fill="none" stroke="#fff" stroke-width="3"/>',
    ),
    "paused": ("#7d8590", '<path d="M47 42 v10 M53 42 v10" stroke="#fff" stroke-width="3"/>'),
    "signed-out": ("none", ""),
    "error": ("#d73a49", '<path d="M50 41 v7 M50 51 v2" stroke="#fff" stroke-width="3"/>'),
}
PANELS = {"light": "#1f2328", "dark": "#f0f3f6"}  # glyph colour for a light / a dark panel


def app_svg() -> str:
    return f"""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
  <defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1">
    <stop offset="0" stop-color="#5b6cf0"/><stop offset="1" stop-color="#3a44b8"/></linearGradient></defs>
  <rect x="2" y="2" width="60" height="60" rx="14" fill="url(#g)"/>
  <path d="{PULSE}" fill="none" stroke="#ffffff" stroke-width="5" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
"""


def tray_svg(panel: str, state: str) -> str:
    """The glyph carries a halo in the opposite colour, so it reads on any panel, whatever `panel` says."""
    glyph = PANELS[panel]
    halo = PANELS["dark" if panel == "light" else "light"]
    fill, mark = STATES[state]
    if state == "signed-out":
        badge = (
            f'<circle cx="50" cy="47" r="10" fill="none" stroke="{halo}" stroke-width="7"/>'
            f'<circle cx="50" cy="47" r="10" fill="none" stroke="{glyph}" stroke-width="3.5"/>'
        )
    else:
        badge = f'<circle cx="50" cy="47" r="12" fill="{fill}" stroke="{halo}" stroke-width="2.5"/>{mark}'
    dim = ' opacity="0.6"' if state in ("paused", "signed-out") else ""
    pulse = "M4 30 H16 L22 10 L30 44 L36 22 L40 30 H44"
    return f"""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
  <g{dim} fill="none" stroke-linecap="round" stroke-linejoin="round">
    <path d="{pulse}" stroke="{halo}" stroke-width="11"/>
    <path d="{pulse}" stroke="{glyph}" stroke-width="6"/>
  </g>
  {badge}
</svg>
"""


def render(svg_file: Path, sizes: tuple[int, ...], out_dir: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg_file))
    assert renderer.isValid(), svg_file
    out_dir.mkdir(parents=True, exist_ok=True)
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(out_dir / f"{svg_file.stem}-{size}.png"))


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication(sys.argv[:1])
    app = HERE / "tenant-events.svg"
    app.write_text(app_svg())
    render(app, APP_SIZES, HERE / "png")
    for panel in PANELS:
        for state in STATES:
            svg = HERE / "tray" / f"tray-{state}-{panel}.svg"
            svg.parent.mkdir(exist_ok=True)
            svg.write_text(tray_svg(panel, state))
            render(svg, TRAY_SIZES, HERE / "tray" / "png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
