"""What the status bar and the tray say, in words a person reads: "paused" instead of a rate while paused, the
last event's time on the user's clock, a stored cursor's age instead of "no cursor yet" when events are stored,
and a sign-in failure that names the sign-in once."""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime

import pytest

from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import make_profile
from tenant_events.view.tenant_status import (
    TenantStatus,
    TrayState,
    age_text,
    local_when,
    rate_text,
    sign_in_line,
    tooltip,
)


@pytest.fixture
def kolkata():
    """A zone 5:30 off UTC, so a local time cannot pass for the UTC one."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ")
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_the_rate_says_paused_while_paused():
    live = TenantStatus("acme", TrayState.LIVE, "live", events_per_s=3.25)
    paused = TenantStatus("acme", TrayState.PAUSED, "paused", events_per_s=3.25)
    assert rate_text(live) == "3.2 events/s"
    assert rate_text(paused) == "paused"
    text = tooltip([TenantStatus("acme", TrayState.PAUSED, "paused", 3.25, 1.0, "2026-11-22T12:00:00Z")], 0)
    assert "paused" in text.splitlines()[-1] and "/s" not in text


def test_the_tooltip_shows_the_last_event_on_the_local_clock(kolkata):
    now = datetime.now(UTC).replace(microsecond=0)
    iso = now.isoformat().replace("+00:00", "Z")
    text = tooltip([TenantStatus("acme", TrayState.LIVE, "live", 1.0, 1.0, iso)], 0)
    local = now.astimezone().strftime("%H:%M:%S")
    assert local != now.strftime("%H:%M:%S")  # the zone really differs from UTC
    assert f"last event {local} · 1.0 events/s" in text
    assert iso not in text and "Z" not in text.split("last event")[1]
    # an older event gets its date, still local: 2026-01-01 23:00 UTC is 2026-01-02 04:30 in Kolkata
    assert local_when("2026-01-01T23:00:00.000Z", now=now) == "2026-01-02 04:30"
    assert local_when("not a time") == "not a time"


def test_a_sign_in_that_did_not_finish_says_why_once():
    assert sign_in_line("sign-in was cancelled", cancelled=True) == "sign-in cancelled"
    refused = sign_in_line("the sign-in was cancelled or refused in the browser", cancelled=False)
    assert refused == "the sign-in was cancelled or refused in the browser"
    assert sign_in_line("the tenant refused the request (400 invalid_grant)", cancelled=False) == (
        "sign-in failed: the tenant refused the request (400 invalid_grant)"
    )


@pytest.mark.gui
def test_the_status_bar_rate_and_cursor_age(qtbot):
    from PySide6.QtWidgets import QStatusBar

    from tenant_events.ui.window.status_line import StatusLine

    bar = QStatusBar()
    qtbot.addWidget(bar)
    line = StatusLine(bar)
    line.show("acme", TenantStatus("acme", TrayState.LIVE, "live", 2.0, 5.0))
    assert (line.rate_label.text(), line.age_label.text()) == ("2.0 events/s", "cursor 5 s old")
    line.show("acme", TenantStatus("acme", TrayState.PAUSED, "paused", 2.0, 5.0))
    assert line.rate_label.text() == "paused" and line.state_label.text() == "acme: paused"


@pytest.mark.gui
def test_a_signed_out_tenant_with_stored_events_shows_its_cursor_age_not_no_cursor(
    qapp, tmp_path, filled_store
):
    from tenant_events.paths import AppPaths
    from tenant_events.tenant.link import TenantLink
    from tenant_events.tenant.sources import of_profile
    from tenant_events.ui.tenant_session import TenantSession

    def session_of(profile):
        return TenantSession(TenantLink(profile.name, paths, of_profile(profile, MemorySecretStore())))

    paths = AppPaths.resolve(tmp_path / "data").ensure()
    profile = make_profile(name="acme", domain="acme.example.com", client_id="abc123")
    paths.database_file("acme").parent.mkdir(parents=True, exist_ok=True)
    shutil.move(filled_store(50), paths.database_file("acme"))
    session = session_of(profile)
    assert session.open_existing()
    session._set_status(TrayState.SIGNED_OUT, "not signed in")  # what restore() says without a stored sign-in
    age = session.status.cursor_age_s
    assert age is not None and 0 <= age < 120
    assert age_text(age) != "no cursor yet"
    session.link.close_readers()

    empty = session_of(make_profile(name="empty", domain="e.example.com", client_id="abc123"))
    empty._set_status(TrayState.SIGNED_OUT, "not signed in")
    assert age_text(empty.status.cursor_age_s) == "no cursor yet"  # nothing stored: true
