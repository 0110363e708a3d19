"""The window's status bar and the tray tooltip show a hostile tenant's words escaped and cut: the state line
the real engine made from a 403 body full of escape sequences, and a sign-in failure that quotes a hostile
identity provider, pass through the app's status funnel (tenant/status.py) into the real widgets."""

from __future__ import annotations

import json

import pytest

from helpers.fixtures_engine import follow
from helpers.fixtures_proving import http_response, raw_server
from tenant_events.tenant.records import StreamState, state_line
from tenant_events.tenant.status import tenant_status
from tenant_events.view.tenant_status import TrayState, sign_in_line, tooltip

HOSTILE = "\x1b[2J\x1b[31mPWNED\x1b[0m\rOVERWRITTEN\nsecond line\u202eevil\x00\x7f\x9b\x1b]0;title\x07"


class _Target:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def mint_token(self) -> str:
        return "hostile-token"


@pytest.mark.gui
def test_the_status_bar_and_tooltip_show_a_hostile_403_escaped(qtbot, tmp_path):
    from PySide6.QtWidgets import QStatusBar

    from tenant_events.ui.window.status_line import StatusLine

    body = json.dumps({"message": HOSTILE + "A" * 3000}).encode()  # read whole: the engine reads 4 KiB
    refusal = http_response("403 Forbidden", {"Content-Type": "application/json"}, body)
    with raw_server("127.0.0.1", refusal) as server:
        rec = follow(
            _Target(server.url),
            tmp_path / "h.sqlite3",
            timeout=30,
            until=lambda r: bool(r.states) and r.states[-1].state.terminal,
        )
    final = rec.states[-1]
    assert final.state is StreamState.ERROR
    bar = QStatusBar()
    qtbot.addWidget(bar)
    line = StatusLine(bar)
    statuses = [
        tenant_status("acme", TrayState.ERROR, state_line(final), None, signed_in=True),
        tenant_status(
            "beta",
            TrayState.SIGNED_OUT,
            sign_in_line(f"the tenant refused ({HOSTILE})", False),
            None,
            signed_in=False,
        ),
    ]
    for status in statuses:
        line.show(status.tenant, status)
        shown = line.state_label.text()
        assert shown.isprintable() and "\\x1b[2J" in shown and "\\r" in shown, repr(shown[:300])
        assert len(shown) <= 700 and "A" * 400 not in shown
    tip = tooltip(statuses, 0)
    assert all(row.isprintable() for row in tip.split("\n")) and len(tip.split("\n")) == 3, repr(tip)
