"""Sigma files the Sigma tests share: the quick-elevation correlation over its two detection rules."""

from __future__ import annotations

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
