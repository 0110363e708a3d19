"""The window's tenant selector offers "All tenants" beside the tenants' names, so no tenant may be called that:
both places that name a tenant (Connect your tenant, Connect to a team hub) refuse it with one line under the
name field, and a settings file that names one so is not taken either."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from tenant_events.settings import HubProfile, Settings, TenantProfile
from tenant_events.ui.dialogs.connect_hub import ConnectHubDialog
from tenant_events.ui.dialogs.connect_tenant import ConnectTenantDialog
from tenant_events.ui.window.filters.filter_bar import ALL_TENANTS

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_connect_your_tenant_refuses_the_selectors_all_tenants(qtbot):
    d = ConnectTenantDialog()
    qtbot.addWidget(d)
    d.show()
    d.domain.setText("acme.eu.auth0.com")
    d.client_id.setText("AbCdEf0123456789AbCdEf0123456789")
    assert d.ok_button.isEnabled()
    d.name.setText(ALL_TENANTS)
    assert not d.ok_button.isEnabled()
    assert d.error_text("name") == "'All tenants' must be 1–64 lowercase letters, digits or dashes"
    assert not any(d.error_text(k) for k in ("domain", "client_id", "audience", "ports"))
    d.name.setText("all-tenants")  # a slug is a name, not the selector's entry (whose text differs)
    assert d.ok_button.isEnabled() and not d.error_text("name")


def test_connect_to_a_team_hub_refuses_the_selectors_all_tenants(qtbot):
    d = ConnectHubDialog()
    qtbot.addWidget(d)
    d.show()
    d.urls.setText("nats://127.0.0.1:4222")
    d.hub_tenant.setText("acme")
    assert d.check_button.isEnabled()
    d.name.setText(ALL_TENANTS)
    assert not d.check_button.isEnabled() and not d.add_button.isEnabled()
    assert d.error_text("name") == "'All tenants' must be 1–64 lowercase letters, digits or dashes"
    assert not any(d.error_text(k) for k in ("urls", "hub_tenant"))


def test_a_settings_file_naming_a_tenant_all_tenants_is_refused():
    tenant = {"name": ALL_TENANTS, "domain": "acme.eu.auth0.com", "client_id": "abc"}
    hub = {"name": ALL_TENANTS, "hub_urls": ["nats://127.0.0.1:4222"], "hub_tenant": "acme"}
    for kind, fields in ((TenantProfile, tenant), (HubProfile, hub)):
        with pytest.raises(ValidationError, match="'All tenants'"):
            kind.model_validate(fields)
    with pytest.raises(ValidationError, match="'All tenants'"):
        Settings.model_validate({"hubs": [hub]})
