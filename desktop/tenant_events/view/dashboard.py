"""Where an event's object lives in the tenant's dashboard, built from the profile's domain.

Only tenant domains of the hosted service (`NAME.auth0.com`, `NAME.REGION.auth0.com`) map to a dashboard; a
custom domain does not say which tenant it fronts, and the simulator has no dashboard, so both get None. The
paths are the dashboard's own page addresses (users by base64 of the user id, organizations and roles by id);
groups and connections have no page of their own that the event identifies, so they open their organization.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import quote

from tenant_events.wire import EventType
from tenant_events.wire.payloads import object_id

DASHBOARD = "https://manage.auth0.com/dashboard"
HOSTED_SUFFIX = ".auth0.com"


def tenant_path(domain: str) -> str | None:
    """'acme.eu.auth0.com' → 'eu/acme'; 'acme.auth0.com' → 'us/acme'; anything else → None."""
    host = domain.split(":", 1)[0].lower().rstrip(".")
    if not host.endswith(HOSTED_SUFFIX):
        return None
    labels = host[: -len(HOSTED_SUFFIX)].split(".")
    if len(labels) == 1 and labels[0]:
        return f"us/{labels[0]}"
    if len(labels) == 2 and all(labels):
        return f"{labels[1]}/{labels[0]}"
    return None


def object_path(event_type: EventType, data: dict[str, Any]) -> str | None:
    """The dashboard page of the object `data` describes, relative to the tenant (None when it has none)."""
    obj = data.get("object")
    if not isinstance(obj, dict):
        return None
    if event_type.family == "user":
        user_id = object_id(event_type, data)
        if user_id is None:
            return None
        return "users/" + quote(base64.b64encode(user_id.encode()).decode(), safe="=+")  # "/" is escaped
    if event_type.family == "organization":
        org_id = object_id(event_type, data)
        if org_id is None:
            return None
        page = "connections" if ".connection." in event_type.value else "members"
        if event_type.value.count(".") == 1:
            page = "overview"
        return f"organizations/{quote(org_id, safe='')}/{page}"
    if event_type.family == "group":  # a group's page is under its organization when it has one
        group = obj.get("group", obj)
        org = group.get("organization_id") if isinstance(group, dict) else None
        return f"organizations/{quote(org, safe='')}/overview" if isinstance(org, str) else None
    return None


def dashboard_url(domain: str, event_type: str, data: Any) -> str | None:
    """The dashboard address for an event's object, or None where the domain or the object has none."""
    tenant = tenant_path(domain)
    try:
        kind = EventType(event_type)
    except ValueError:
        return None
    if tenant is None or not isinstance(data, dict):
        return None
    path = object_path(kind, data)
    return f"{DASHBOARD}/{tenant}/{path}" if path else None
