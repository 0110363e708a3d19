"""Every text colour of both themes meets WCAG AA against each background it is drawn on; the palettes the app
applies are the ones checked; the detail pane's JSON follows a theme switch."""

from __future__ import annotations

import pytest

from tenant_events.ui.look.colors import (
    AA_LARGE,
    AA_TEXT,
    DARK,
    JSON_COLORS,
    LIGHT,
    Pair,
    contrast_ratio,
    over,
    relative_luminance,
    text_pairs,
)


def test_contrast_maths_matches_wcag():
    assert relative_luminance("#000000") == 0 and relative_luminance("#FFFFFF") == 1
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)
    assert contrast_ratio("#ffffff", "#000000") == pytest.approx(21)
    assert contrast_ratio("#1c2128", "#1c2128") == 1
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the classic AA grey
    assert contrast_ratio("#777777", "#ffffff") < AA_TEXT
    # the pair that once shipped: the light theme's string green on the dark theme's base
    assert contrast_ratio("#116329", "#1C2128") == pytest.approx(2.2, abs=0.05)
    assert over((255, 0, 0, 255), "#000000") == "#ff0000" and over((255, 255, 255, 0), "#123456") == "#123456"
    assert over((255, 255, 255, 128), "#000000") == "#808080"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_every_text_colour_meets_aa(dark):
    pairs = text_pairs(dark)
    failing = [
        f"{p.what}: {p.foreground} on {p.background} = {p.ratio:.2f}:1 < {p.minimum}"
        for p in pairs
        if p.ratio < p.minimum
    ]
    assert not failing, "\n".join(failing)
    # the check covers the pairs that once failed and each family of colours
    names = " | ".join(p.what for p in pairs)
    for what in (
        "JSON string on Base",
        "PlaceholderText on Base",
        "group type on AlternateBase",
        "tenant colour 0 on Base",
        "HighlightedText on Highlight",
        "error text on Window",
    ):
        assert what in names
    assert all(p.minimum in (AA_TEXT, AA_LARGE) for p in pairs)


def test_a_failing_pair_is_reported():
    assert Pair("x", "#116329", DARK["Base"]).ratio < AA_TEXT


@pytest.fixture
def light_again(qapp):
    yield
    from tenant_events.ui.look.theme import apply_theme

    apply_theme(qapp, "light")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_applied_palette_is_the_checked_one(qapp, light_again, theme):
    from PySide6.QtGui import QPalette

    from tenant_events.ui.look.theme import apply_theme, family_color, is_dark, tenant_color

    dark = apply_theme(qapp, theme)
    table = DARK if dark else LIGHT
    palette = qapp.palette()
    for role, hexcolor in table.items():
        assert palette.color(getattr(QPalette.ColorRole, role)).name() == hexcolor, role
    assert is_dark() is dark
    assert {p.foreground for p in text_pairs(dark) if p.what.startswith("tenant")} >= {
        tenant_color(name).name() for name in ("acme", "globex", "initech", "demo-tenant")
    }
    assert family_color("group", dark).name() in {p.foreground for p in text_pairs(dark)}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_disabled_button_looks_disabled(qapp, light_again, theme):
    """In both themes a disabled control's text is dimmed: the light palette set its text black in every group,
    so the inbox's Acknowledge, greyed out for a resolved alert, looked as clickable as ever."""
    from PySide6.QtGui import QPalette

    from tenant_events.ui.look.theme import apply_theme

    apply_theme(qapp, theme)
    palette = qapp.palette()
    for role in (QPalette.ColorRole.ButtonText, QPalette.ColorRole.Text, QPalette.ColorRole.WindowText):
        active = palette.color(QPalette.ColorGroup.Active, role)
        disabled = palette.color(QPalette.ColorGroup.Disabled, role)
        assert abs(active.lightness() - disabled.lightness()) >= 60, (role, active.name(), disabled.name())


def test_the_detail_pane_recolours_its_json_when_the_theme_changes(qtbot, qapp, light_again):
    from tenant_events.ui.look.theme import apply_theme
    from tenant_events.ui.window.detail_pane import DetailPane
    from tenant_events.values.events import StoredEvent

    apply_theme(qapp, "light")
    pane = DetailPane()
    qtbot.addWidget(pane)
    raw = '{"offset": "o1", "event": {"id": "evt_1", "data": {"object": {"name": "Ada", "n": 3}}}}'
    pane.show_event(
        StoredEvent(
            1,
            "evt_1",
            "o1",
            "user.created",
            "user",
            "2026-01-01T00:00:00.000Z",
            "urn:x",
            "acme",
            None,
            "User Ada created",
            1.0,
            raw,
        )
    )
    light_string, dark_string = JSON_COLORS["string"]
    assert light_string in pane.browser.toHtml().lower()
    # Qt posts the palette change to the widgets: the pane repaints on its loop turn
    apply_theme(qapp, "dark")
    qtbot.waitUntil(lambda: dark_string in pane.browser.toHtml().lower())
    html = pane.browser.toHtml().lower()
    assert dark_string in html and light_string not in html
    assert JSON_COLORS["key"][1] in html and JSON_COLORS["literal"][1] in html
