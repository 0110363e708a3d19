"""Sigma files the Sigma tests share: the quick-elevation correlation over its two detection rules, and one
detection rule a user imports while the app runs."""

from __future__ import annotations

from typing import Any

ELEVATION = """title: Admin granted
name: granted
logsource: {product: auth0, service: events}
detection:
  s: {type: organization.member.role.assigned, data.object.role.name|contains: admin}
  condition: s
---
title: Admin removed
name: removed
logsource: {product: auth0, service: events}
detection:
  s: {type: organization.member.role.deleted, data.object.role.name|contains: admin}
  condition: s
---
title: Temporary elevation
name: quick-elevation
level: critical
correlation:
  type: temporal_ordered
  rules: [granted, removed]
  group-by: [data.object.user.user_id]
  timespan: 60m
"""

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
