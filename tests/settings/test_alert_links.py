"""Alert links (tenant-events://alert/TENANT/ID): made and read back, and anything else opens nothing."""

from __future__ import annotations

import pytest

from tenant_events.url_forms import alert_link, parse_alert_link


def test_a_link_reads_back_as_its_tenant_and_alert():
    assert alert_link("demo-tenant", 42) == "tenant-events://alert/demo-tenant/42"
    assert parse_alert_link(alert_link("demo-tenant", 42)) == ("demo-tenant", 42)
    assert parse_alert_link("TENANT-EVENTS://Alert/acme/7/") == ("acme", 7)


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
        "--demo",
        "",
    ],
)
def test_anything_else_is_not_an_alert_link(text):
    assert parse_alert_link(text) is None
