"""The tenant's world for the generator: names, fixed roles/connections, organizations and groups with their
members, and the RFC 3339 timestamps events carry (docs/event-stream.md "Envelope", "Payloads")."""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tenant_events.simulator.bag import Bag

ALNUM = string.ascii_letters + string.digits
GROUP_ALPHABET = (
    "123456789abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"  # the real service's grp_ id alphabet
)
FIRST = ("Ada", "Alan", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Radia", "Tim", "Frances")
LAST = ("Lovelace", "Turing", "Hopper", "Torvalds", "Liskov", "Thompson", "Hamilton", "Ritchie", "Perlman")
ROLE_NAMES = ("admin", "auditor", "billing", "developer", "support", "viewer")
ADMIN_ROLE_NAMES = frozenset({"admin"})  # routine live traffic never grants these (scenarios.py does)
# What routine live traffic leaves out: the alert rules' incidents, acted out on purpose by scenarios.py
SENSITIVE_TYPES = frozenset(
    {"organization.deleted", "organization.connection.added", "organization.connection.removed"}
)
# Routine sign-ups in any tenant minute, at most: well under the sign-up burst rule's 60 (a busy test tenant's
# 170 events a minute held up to 51 sign-ups by chance, and now and then 60)
ROUTINE_SIGNUPS_PER_MINUTE = 40
# Routine deletions of users, groups or organizations in any tenant minute, at most, each type on its own: half the
# mass deletion rule's 20 (the same busy tenant deleted up to 17 users a minute by chance, and once in about a
# hundred runs 20)
ROUTINE_DELETIONS_PER_MINUTE = 10
# The tenant's connections (name, strategy), as the service names its defaults: its users sign up and log in
# through them, and events from those flows carry the connection in `data.context.connection`.
CONNECTIONS = (
    ("Username-Password-Authentication", "auth0"),
    ("google-oauth2", "google-oauth2"),
    ("acme-saml", "samlp"),
    ("email", "email"),
)
# Which connection a new user signs up through, by one hex digit of its id (no draw of the seeded generator, so
# a seed's sequence of events stays what it was): the database for most, then Google, the SAML IdP, email codes.
SIGNUP_CONNECTION = "0000000001111223"
GEO = {
    "country_code": "DE",
    "country_name": "Germany",
    "city_name": "Berlin",
    "continent_code": "EU",
    "latitude": 52.52,
    "longitude": 13.40,
    "time_zone": "Europe/Berlin",
}
# Who makes the changes: a couple of dozen admins' dashboard sessions and service clients (ordinary traffic spreads
# over them, so no one actor deletes much), and the script that acts out the incidents (scenarios.py).
CLIENTS = (
    ("tenant-events-service", "Demo service"),
    ("hr-sync", "HR sync"),
    ("scim-provisioner", "SCIM provisioner"),
    ("support-portal", "Support portal"),
    ("billing-bridge", "Billing bridge"),
    ("crm-connector", "CRM connector"),
    ("terraform", "Terraform"),
    ("onboarding-bot", "Onboarding bot"),
    ("audit-exporter", "Audit exporter"),
    *((f"dashboard-{n.lower()}", f"Dashboard ({n})") for n in FIRST),
    ("mobile-backend", "Mobile backend"),
    ("partner-api", "Partner API"),
    ("ops-runbook", "Ops runbook"),
)
INCIDENT_ACTOR = ("backoffice-script", "Backoffice Script", "198.51.100.23")  # client id, name, request IP
CAPS = {"user": 2000, "organization": 60, "group": 120}  # past these, "created" becomes "deleted"
ORG_BRANDING = {"colors": {"primary": "#0059d6", "page_background": "#000000"}}


_second_cache: list[Any] = [None, ""]


def iso_ms(ts: float) -> str:
    """RFC 3339 UTC with milliseconds, as the live service writes `time` (docs/event-stream.md "Envelope")."""
    second = int(ts)
    if _second_cache[0] != second:  # strftime once per second: the backlog writes ~60k events a second
        _second_cache[0] = second
        _second_cache[1] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_second_cache[1]}.{int((ts - second) * 1000):03d}Z"


@dataclass
class Org:
    id: str
    name: str
    display_name: str
    members: Bag[str] = field(default_factory=Bag)
    connections: set[str] = field(default_factory=set)
    member_roles: dict[str, set[str]] = field(default_factory=dict)
    groups: set[str] = field(default_factory=set)


@dataclass
class Group:
    id: str
    name: str
    kind: str  # tenant | organization | connection
    parent: str | None
    created_at: str
    members: Bag[str] = field(default_factory=Bag)
    roles: set[str] = field(default_factory=set)
    org_roles: set[str] = field(default_factory=set)  # roles given to it inside its organization
