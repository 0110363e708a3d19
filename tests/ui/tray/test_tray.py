"""The tray icon under a real tray host (trayer on Xvfb): state icon, tooltip, menu actions, click toggles,
closing the window keeps the app in the tray (said once), Quit from the menu ends the app."""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage

from helpers.browser import act_as_browser
from helpers.fixtures_ui import SCREENSHOTS, run_async, running_app, signal_future, until
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import make_profile
from tenant_events.view.tenant_status import TrayState

pytestmark = pytest.mark.gui
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def test_tray_icon_and_menu_under_trayer(qloop, ui_paths, tray_host, make_simulator):
    sim = make_simulator(seed=4, backlog=20, rate=5.0, heartbeat=0.25)

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            assert app.tray is not None and app.window.keep_in_tray
            icon = app.tray.icon
            await until(lambda: icon.isVisible() and icon.geometry().width() > 0, 10, "icon docked in trayer")
            assert app.tray.state is TrayState.SIGNED_OUT
            profile = make_profile(
                name="acme",
                domain=sim.auth_url.split("//")[1],
                auth_url=sim.auth_url,
                base_url=sim.base_url,
                client_id=sim.demo_client_id,
            )
            session = await app.add_tenant(profile)
            await until(lambda: app.tray.state is TrayState.LIVE, 15, "tray icon live")
            assert "acme: live" in icon.toolTip()
            assert [a.text() for a in app.tray.tenants_menu.actions()] == ["acme"]
            assert [a.text() for a in app.tray.sign_menu.actions()] == ["Sign out of acme"]

            # Pause / Resume from the menu
            app.tray.pause_action.trigger()
            await until(lambda: app.tray.state is TrayState.PAUSED, 10, "paused icon")
            assert session.paused and app.tray.pause_action.text() == "Resume stream"
            assert app.window.pause_action.isChecked()
            app.tray.pause_action.trigger()
            await until(lambda: app.tray.state is TrayState.LIVE, 10, "live again")

            # closing the window keeps the app in the tray, and says so once
            app.window.show()
            closed = signal_future(app.window.closed_to_tray)
            app.window.close()
            await closed
            assert not app.window.isVisible() and not app.quitting.is_set() and app.window.tray_hint_shown

            # the docked icon as the X server draws it (no window on top now)
            g = icon.geometry()
            root = SCREENSHOTS / "x-root.png"
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(subprocess.run, ["import", "-window", "root", str(root)], check=True)
            shot = QImage(str(root))
            strip = shot.copy(QRect(max(0, g.right() - 200), 0, 200 + 8, g.bottom() + 8))
            assert strip.save(str(SCREENSHOTS / "tray-xvfb.png"))
            # readable on this panel: the glyph has pixels far from the panel colour (users of tray apps ask for exactly this)
            panel = shot.pixelColor(g.left(), g.top()).lightness()
            glyph_area = [  # the pulse line, left of and above the state badge
                (x, y)
                for x in range(g.left(), g.left() + int(g.width() * 0.6))
                for y in range(g.top(), g.top() + int(g.height() * 0.55))
            ]
            spread = max(abs(shot.pixelColor(x, y).lightness() - panel) for x, y in glyph_area)
            assert spread > 120, f"tray icon barely visible on a panel of lightness {panel} (max Δ {spread})"
            root.unlink()
            # a real click on the docked icon toggles the window (xdotool on the X server)
            await asyncio.to_thread(
                subprocess.run,
                ["xdotool", "mousemove", str(g.center().x()), str(g.center().y()), "click", "1"],
                check=True,
            )
            await until(lambda: app.window.isVisible(), 10, "window shown by a tray click")
            # Open, then Quit from the menu
            app.window.hide()
            app.tray.open_action.trigger()
            assert app.window.isVisible()
            app.tray.quit_action.trigger()
            assert app.quitting.is_set()

    run_async(qloop, scenario(), timeout=120)
