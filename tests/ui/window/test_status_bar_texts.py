"""What the status bar says, in words a person reads: "paused" instead of a rate while paused, and a stored
cursor's age instead of "no cursor yet" for a signed-out tenant whose events are stored."""

from __future__ import annotations

import shutil

import pytest

from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import make_profile
from tenant_events.view.tenant_status import TenantStatus, TrayState, age_text


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
