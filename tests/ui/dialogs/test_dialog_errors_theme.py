"""Errors in the tenant, welcome and hub dialogs are drawn in the theme's error colour, which meets WCAG AA on
the dialog's background in both themes (the dark theme's background made the light theme's red 2.8:1); the hub
dialog's as-typed checks; screenshots of the hub dialog, light and dark."""

from __future__ import annotations

import re

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, save_screenshot
from tenant_events.ui.look.colors import AA_TEXT, DARK, ERROR_COLORS, LIGHT, contrast_ratio, text_pairs

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


@pytest.fixture
def theme(qapp, request):
    from tenant_events.ui.look.theme import apply_theme

    dark = apply_theme(qapp, request.param)
    yield dark
    apply_theme(qapp, "light")


def colour_of(style_or_html: str) -> str:
    found = re.search(r"color:\s*(#[0-9a-fA-F]{6})", style_or_html)
    assert found, style_or_html
    return found.group(1).lower()


def test_the_dialog_error_pairs_are_in_the_contrast_check():
    for dark, palette in ((False, LIGHT), (True, DARK)):
        pairs = {p.what: p for p in text_pairs(dark)}
        pair = pairs["dialog error on Window"]
        assert pair.foreground == ERROR_COLORS[int(dark)] and pair.background == palette["Window"]
        assert pair.ratio >= AA_TEXT
    # what the dialogs drew before: the light theme's red on the dark theme's window
    assert contrast_ratio("#cf222e", DARK["Window"]) < 3.0


@pytest.mark.parametrize("theme", ["light", "dark"], indirect=True)
def test_dialog_errors_use_the_themes_error_colour(qtbot, qapp, theme):
    from PySide6.QtGui import QPalette

    from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog
    from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
    from tenant_events.ui.dialogs.welcome import WelcomeWindow

    window = qapp.palette().color(QPalette.ColorRole.Window).name()
    expected = ERROR_COLORS[int(theme)]

    tenant = ConnectTenantDialog()
    qtbot.addWidget(tenant)
    tenant.ports.setText("80")
    assert tenant.error_text("ports")
    hub = ConnectHubDialog()
    qtbot.addWidget(hub)
    hub.urls.setText("http://hub.example.com")
    assert "is not a hub URL" in hub.error_text("urls")
    welcome = WelcomeWindow()
    qtbot.addWidget(welcome)
    welcome.show_problem("The demo tenant did not start")
    for drawn in (
        tenant.errors["ports"].styleSheet(),
        hub.errors["urls"].styleSheet(),
        welcome.status.text(),
    ):
        assert colour_of(drawn) == expected
        assert contrast_ratio(expected, window) >= AA_TEXT


def test_the_hub_dialog_checks_fields_as_typed(qtbot):
    from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog

    d = ConnectHubDialog()
    qtbot.addWidget(d)
    d.show()
    assert not d.add_button.isEnabled() and not any(
        d.error_text(k) for k in d.errors
    )  # nothing typed: no red
    d.urls.setText("nats://hub.example.com:4222")
    assert "is not encrypted; use tls://hub.example.com:4222" in d.error_text("urls")
    d.urls.setText("tls://a.example.com:4222, tls://b.example.com")
    assert d.error_text("urls") == ""
    d.hub_tenant.setText("Acme Corp")
    assert "is not a hub tenant name" in d.error_text("hub_tenant")
    d.hub_tenant.setText("acme")
    assert d.add_button.isEnabled()  # no sign-in: a complete request
    assert d.request is not None and d.request.profile.name == "acme"
    assert d.request.profile.hub_urls == ["tls://a.example.com:4222", "tls://b.example.com:4222"]
    # user and password: both needed, the password field shows, the key file does not
    d.auth.setCurrentIndex(d.auth.findData("password"))
    assert d.secret.isVisible() and d.user.isVisible() and not d.key_file.isVisible()
    assert not d.add_button.isEnabled()
    d.secret.setText("s3cret")
    assert "is required to sign in with a password" in d.error_text("user") or not d.add_button.isEnabled()
    d.user.setText("viewer")
    assert d.add_button.isEnabled() and d.request is not None and d.request.secret == "s3cret"
    assert "s3cret" not in repr(d.request)
    # a creds file: a path, read by the app; the typed password is not sent along
    d.auth.setCurrentIndex(d.auth.findData("creds"))
    assert d.key_file.isVisible() and not d.secret.isVisible() and not d.add_button.isEnabled()
    d.key_file.setText("/home/me/viewer.creds")
    assert d.request is not None and d.request.secret == "" and d.request.key_file == "/home/me/viewer.creds"
    d.name.setText("acme-team")
    assert d.request is not None and d.request.profile.name == "acme-team"


@pytest.mark.parametrize("theme", ["light", "dark"], indirect=True)
def test_hub_dialog_screenshots(qtbot, theme):
    from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog

    d = ConnectHubDialog()
    qtbot.addWidget(d)
    d.show()
    d.urls.setText("tls://hub.example.com:4222, tls://hub-b.example.com:4222")
    d.hub_tenant.setText("acme")
    d.auth.setCurrentIndex(d.auth.findData("password"))
    d.user.setText("viewer")
    d.secret.setText("password")
    d.check_failed(
        "secret",
        "the hub tls://hub.example.com:4222 refused the sign-in (authorization violation) "
        "— check the hub user and its password, token, NKey or creds file",
    )
    qtbot.waitExposed(d)
    save_screenshot(d, f"connect-hub-{'dark' if theme else 'light'}")
