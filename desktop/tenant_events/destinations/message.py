"""What a delivery says: the alert as the window shows it, the link that opens it, and its dedup key.

Title: "[critical] Mass deletion × 3 — acme" (the tenant as the app names it: its profile); body: the sentence with names, the count and the time range, and
the link `tenant-events://alert/<tenant>/<id>`. The dedup key (tenant, alert id and version) is the same on
every attempt, so a receiver that de-duplicates (PagerDuty's `dedup_key`, a webhook reading the
`Idempotency-Key` header or the `dedup_key` field) sees one incident however often it was retried.
"""

from __future__ import annotations

from dataclasses import dataclass

from tenant_events.alerts.presentation import title, why
from tenant_events.url_forms import alert_link
from tenant_events.values.alerts import StoredAlert

DEDUP_HEADER = "Idempotency-Key"
DEDUP_FIELD = "dedup_key"


@dataclass(frozen=True, slots=True)
class AlertMessage:
    title: str
    body: str
    severity: str
    dedup_key: str
    link: str


def dedup_key(tenant: str, alert_id: int, version: int) -> str:
    return f"tenant-events:{tenant}:{alert_id}:{version}"


def alert_message(alert: StoredAlert, version: int, profile: str) -> AlertMessage:
    """The message for `alert` at `version`, stored in the database of tenant profile `profile`. The title,
    the link and the key name the profile, as the app names the tenant everywhere ("demo", not the service's
    "demo-tenant"); the body adds the service's tenant id when it is another name."""
    first, last = alert.first_time, alert.last_time
    span = first if first == last else f"{first} – {last}"
    events = "1 event" if alert.event_count == 1 else f"{alert.event_count} events"
    said = why(alert)
    link = alert_link(profile, alert.id)
    tenant = profile if alert.tenant in ("", profile) else f"{profile} ({alert.tenant})"
    text = f"{said}\n{events}, {span}\nRule: {alert.rule_name} ({alert.severity}) · tenant {tenant}\n{link}"
    return AlertMessage(
        title=f"[{alert.severity}] {title(alert)} — {profile}",
        body=text,
        severity=alert.severity,
        dedup_key=dedup_key(profile, alert.id, version),
        link=link,
    )


def test_message(name: str) -> AlertMessage:
    """The message "Send a test alert" sends: clearly a test, with its own key each time."""
    import time

    key = f"tenant-events:test:{name}:{time.time_ns()}"
    return AlertMessage(
        title="[info] Test alert from Tenant Events",
        body=f"This is a test of the alert destination {name!r}. Alerts sent here will look like this one.",
        severity="info",
        dedup_key=key,
        link="",
    )
