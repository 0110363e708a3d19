"""A silence, as Alertmanager has them: matchers on an alert's rule, severity, tenant and group, a time span, who
made it and why. While a silence matches an alert, the alert is still stored and listed (dimmed), but nothing is
notified or delivered for it.

A matcher left out (None) matches every alert; `group` matches a grouped rule's group by its key (a client id)
or by the name the alert shows for it ("client HR Import"); `tenant` by the profile name or the tenant id.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from tenant_events.values.alerts import StoredAlert

GROUP_MARK: Final = (
    " · "  # a grouped rule's alert is called "<rule name> · <group>" (alerts/compiled_rule.py)
)


@dataclass(frozen=True, slots=True)
class Silence:
    """One silence; times are unix seconds."""

    id: str
    starts_at: float
    ends_at: float
    author: str
    comment: str = ""
    rule: str | None = None
    severity: str | None = None
    tenant: str | None = None
    group: str | None = None
    created_at: float = 0.0

    def active(self, now: float) -> bool:
        return self.starts_at <= now < self.ends_at

    def matches(self, alert: StoredAlert, profile: str) -> bool:
        """Whether every matcher given holds for the alert (time aside)."""
        if self.rule is not None and self.rule != alert.rule_id:
            return False
        if self.severity is not None and self.severity != alert.severity:
            return False
        if self.tenant is not None and self.tenant not in (profile, alert.tenant):
            return False
        if self.group is not None:
            label = alert.rule_name.partition(GROUP_MARK)[2]
            if self.group not in (alert.group_key, label) or not (alert.group_key or label):
                return False
        return True

    def matchers_text(self) -> str:
        """ "rule mass-deletion-by-actor, group client HR Import" ("every alert" with no matcher)."""
        parts = [
            f"{name} {value}"
            for name, value in (
                ("rule", self.rule),
                ("severity", self.severity),
                ("tenant", self.tenant),
                ("group", self.group),
            )
            if value is not None
        ]
        return ", ".join(parts) or "every alert"

    def text(self, now: float) -> str:
        """One line: what, until when, by whom, why."""
        until = datetime.fromtimestamp(self.ends_at).strftime("%Y-%m-%d %H:%M")
        when = (
            f"until {until}" if self.active(now) else ("ended" if now >= self.ends_at else f"from … {until}")
        )
        said = f": {self.comment}" if self.comment else ""
        return f"{self.matchers_text()} — {when}, by {self.author}{said}"


def silencing(silences: Iterable[Silence], alert: StoredAlert, profile: str, now: float) -> Silence | None:
    """The active silence that matches the alert (the one that ends last), or None."""
    found = [s for s in silences if s.active(now) and s.matches(alert, profile)]
    return max(found, key=lambda s: s.ends_at) if found else None
