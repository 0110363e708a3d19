"""A Sigma rule file as a user would import it, for tests of what happens around the import."""

from __future__ import annotations

from typing import Any

VIP_DELETED = """title: VIP deleted
name: vip-deleted
level: high
logsource: {product: auth0, service: events}
detection:
  s:
    type: user.deleted
    data.object.email|startswith: ceo@
  condition: s
"""


def has_vip_deleted(settings: Any) -> bool:
    """Whether the settings hold the rule VIP_DELETED imports."""
    return any(entry.get("id") == "vip-deleted" for entry in settings.alerts.rules)
