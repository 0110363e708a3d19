"""Every colour of the light and dark themes as hex, and the WCAG 2.x contrast maths that keeps text readable.

Qt-free on purpose: theme.py builds the palettes from these tables, and a test checks every pair of text and
background colour here against WCAG AA (4.5:1 for text, 3:1 for large text; w3.org/TR/WCAG21/#contrast-minimum)
without a display. A colour for text goes into `text_pairs` with each background it is drawn on. Disabled
text is exempt (WCAG 1.4.3 "incidental": inactive controls) and is left out.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Final

# QPalette role name -> colour. The light theme is Fusion's own palette (its values, listed so they can be
# checked) with the roles below set; the dark one is all ours.
LIGHT: Final[dict[str, str]] = {
    "Window": "#efefef",
    "WindowText": "#000000",
    "Base": "#ffffff",
    "AlternateBase": "#f7f7f7",
    "ToolTipBase": "#ffffdc",
    "ToolTipText": "#000000",
    "Text": "#000000",
    "Button": "#efefef",
    "ButtonText": "#000000",
    "Link": "#0550ae",
    "LinkVisited": "#8250df",
    "Highlight": "#0969da",
    "HighlightedText": "#ffffff",
    "PlaceholderText": "#636c76",  # Fusion's is Text at 50 % alpha: #808080 on white, 3.9:1
}
DARK: Final[dict[str, str]] = {
    "Window": "#22272e",
    "WindowText": "#e6edf3",
    "Base": "#1c2128",
    "AlternateBase": "#262c36",
    "ToolTipBase": "#2d333b",
    "ToolTipText": "#e6edf3",
    "Text": "#e6edf3",
    "Button": "#2d333b",
    "ButtonText": "#e6edf3",
    "BrightText": "#ff7b72",
    "Link": "#58a6ff",
    "LinkVisited": "#bc8cff",
    "Highlight": "#316dca",
    "HighlightedText": "#ffffff",
    "PlaceholderText": "#8b949e",
    "Mid": "#444c56",
    "Dark": "#1c2128",
}
DARK_DISABLED_TEXT: Final = "#6e7781"

# Event families (EventType.family) -> (light, dark): the Type column's text, on Base and AlternateBase.
FAMILY_COLORS: Final[dict[str, tuple[str, str]]] = {
    "user": ("#1a7f37", "#3fb950"),
    "group": ("#8250df", "#b392f0"),
    "organization": ("#0969da", "#58a6ff"),
}
OTHER_FAMILY: Final = ("#57606a", "#8b949e")
# Tenant column text and the tenant menu's swatches: one hue per tenant, a shade per theme.
TENANT_COLORS: Final[tuple[tuple[str, str], ...]] = (
    ("#9a6700", "#d29922"),
    ("#cf222e", "#ff7b72"),
    ("#1a7f37", "#3fb950"),
    ("#8250df", "#bc8cff"),
    ("#0969da", "#58a6ff"),
    ("#bc4c00", "#f0883e"),
)
# The detail pane's JSON (on Base): keys, string values, numbers/true/false/null.
JSON_COLORS: Final[dict[str, tuple[str, str]]] = {
    "key": ("#0550ae", "#79c0ff"),
    "string": ("#116329", "#7ee787"),
    "literal": ("#953800", "#ffa657"),
}
ERROR_COLORS: Final = ("#cf222e", "#ff7b72")  # a problem's text (on Window) and its underline (on Base)
GAP_TINT: Final = (232, 163, 23, 70)  # possible-gap rows: RGBA over Base, under bold Text

AA_TEXT: Final = 4.5
AA_LARGE: Final = 3.0


def pick(pair: tuple[str, str], dark: bool) -> str:
    return pair[1] if dark else pair[0]


_ASSIGNED: dict[str, int] = {}  # tenant → its colour's index, set by assign_tenant_colors


def assign_tenant_colors(tenants: list[str]) -> dict[str, int]:
    """Give each tenant its own colour while there are enough: in the given (profile) order, each takes the colour
    its name hashes to, or the next one free. A tenant added later never moves the earlier ones."""
    taken: set[int] = set()
    _ASSIGNED.clear()
    for tenant in tenants:
        slot = zlib.crc32(tenant.encode()) % len(TENANT_COLORS)
        for step in range(len(TENANT_COLORS)):
            if (slot + step) % len(TENANT_COLORS) not in taken:
                slot = (slot + step) % len(TENANT_COLORS)
                break
        taken.add(slot)
        _ASSIGNED[tenant] = slot
    return dict(_ASSIGNED)


def tenant_hex(tenant: str, dark: bool) -> str:
    """A stable colour per tenant (the same every run: crc32, not Python's salted hash; told apart from the other
    tenants' by assign_tenant_colors)."""
    slot = _ASSIGNED.get(tenant, zlib.crc32(tenant.encode()) % len(TENANT_COLORS))
    return pick(TENANT_COLORS[slot], dark)


def _rgb(hexcolor: str) -> tuple[int, int, int]:
    h = hexcolor.lstrip("#")
    if len(h) != 6:
        raise ValueError(f"not a #rrggbb colour: {hexcolor!r}")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def relative_luminance(hexcolor: str) -> float:
    """WCAG 2.x relative luminance of an sRGB colour (0 black … 1 white)."""

    def linear(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _rgb(hexcolor))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: str, background: str) -> float:
    """(L1 + 0.05) / (L2 + 0.05) with L1 the lighter: 1 (none) … 21 (black on white)."""
    high, low = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def over(rgba: tuple[int, int, int, int], background: str) -> str:
    """`rgba` composited over an opaque `background`, as the view paints a translucent brush."""
    alpha = rgba[3] / 255
    mixed = (round(c * alpha + b * (1 - alpha)) for c, b in zip(rgba[:3], _rgb(background), strict=True))
    return "#" + "".join(f"{c:02x}" for c in mixed)


@dataclass(frozen=True)
class Pair:
    what: str
    foreground: str
    background: str
    minimum: float = AA_TEXT

    @property
    def ratio(self) -> float:
        return contrast_ratio(self.foreground, self.background)


def text_pairs(dark: bool) -> list[Pair]:
    """Every text colour of the theme with each background it is drawn on, and the contrast it needs."""
    p = DARK if dark else LIGHT
    pairs = [
        Pair("Text on Base", p["Text"], p["Base"]),
        Pair("Text on AlternateBase", p["Text"], p["AlternateBase"]),
        Pair("WindowText on Window", p["WindowText"], p["Window"]),
        Pair("ButtonText on Button", p["ButtonText"], p["Button"]),
        Pair("ToolTipText on ToolTipBase", p["ToolTipText"], p["ToolTipBase"]),
        Pair("HighlightedText on Highlight", p["HighlightedText"], p["Highlight"]),
        Pair("PlaceholderText on Base", p["PlaceholderText"], p["Base"]),
        Pair("Link on Base", p["Link"], p["Base"]),
        Pair("Link on Window", p["Link"], p["Window"]),
        Pair("LinkVisited on Base", p["LinkVisited"], p["Base"]),
        Pair("error text on Window", pick(ERROR_COLORS, dark), p["Window"]),
        Pair("error underline on Base", pick(ERROR_COLORS, dark), p["Base"], AA_LARGE),
        Pair(
            "dialog error on Window", pick(ERROR_COLORS, dark), p["Window"]
        ),  # connect, welcome, hub dialogs
        Pair("gap row text", p["Text"], over(GAP_TINT, p["Base"])),
    ]
    if "BrightText" in p:
        pairs.append(Pair("BrightText on Dark", p["BrightText"], p["Dark"]))
    backgrounds = ("Base", "AlternateBase")
    for family, colours in [*FAMILY_COLORS.items(), ("other", OTHER_FAMILY)]:
        pairs += [Pair(f"{family} type on {b}", pick(colours, dark), p[b]) for b in backgrounds]
    for k, colours in enumerate(TENANT_COLORS):
        pairs += [Pair(f"tenant colour {k} on {b}", pick(colours, dark), p[b]) for b in backgrounds]
    pairs += [Pair(f"JSON {name} on Base", pick(c, dark), p["Base"]) for name, c in JSON_COLORS.items()]
    return pairs
