"""Alert links (tenant-events://alert/TENANT/ID, a team's tenant-events://team-alert/TENANT/KEY): made and read
back, and anything else opens nothing."""

from __future__ import annotations

import pytest

from tenant_events.url_forms import AlertLink, alert_link, parse_alert_link, team_alert_link


def test_a_link_reads_back_as_its_tenant_and_alert():
    assert alert_link("demo-tenant", 42) == "tenant-events://alert/demo-tenant/42"
    assert parse_alert_link(alert_link("demo-tenant", 42)) == AlertLink("demo-tenant", 42)
    assert parse_alert_link("TENANT-EVENTS://Alert/acme/7/") == AlertLink("acme", 7)


def test_a_team_link_reads_back_as_the_hub_tenant_and_the_alerts_name_there():
    link = team_alert_link("eu-prod", "mass-deletion.evt_7fKx_Q-2")
    assert link == "tenant-events://team-alert/eu-prod/mass-deletion.evt_7fKx_Q-2"
    assert parse_alert_link(link) == AlertLink("eu-prod", team_key="mass-deletion.evt_7fKx_Q-2")  # case kept
    hashed = "h0123456789abcdef.0123456789abcdef"  # ids that cannot be key tokens are named by a digest
    assert parse_alert_link(team_alert_link("acme", hashed)) == AlertLink("acme", team_key=hashed)


@pytest.mark.parametrize(
    "text",
    [
        "https://alert/acme/7",
        "tenant-events://event/acme/7",
        "tenant-events://alert/acme",
        "tenant-events://alert/acme/7/8",
        "tenant-events://alert/acme/-7",
        "tenant-events://alert/acme/٣",  # a digit, but not an ASCII one
        "tenant-events://alert/../7",
        "tenant-events://alert/a%2Fb/7",
        "tenant-events://alert/" + "a" * 65 + "/7",
        "tenant-events://alert/acme/x",
        "tenant-events://team-alert/acme",
        "tenant-events://team-alert/acme/rule",  # no first event
        "tenant-events://team-alert/acme/a.b.c",
        "tenant-events://team-alert/acme/.evt_a",
        "tenant-events://team-alert/acme/rule.evt a",
        "tenant-events://team-alert/acme/rule.evt%2Fa",
        "tenant-events://team-alert/Acme/rule.evt_a",  # hub tenants are lower-case
        "tenant-events://team-alert/acme/" + "r" * 129 + ".evt_a",
        "tenant-events://team-alert/acme/rule.evt_a/7",
        "tenant-events://team-alert/../rule.evt_a",
        "--demo",
        "",
    ],
)
def test_anything_else_is_not_an_alert_link(text):
    assert parse_alert_link(text) is None
