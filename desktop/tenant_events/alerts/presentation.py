"""How an alert reads to a person: its title, one or two lines of why, the catch-up tally, its JSON line.

Shared by the CLI (`stream --alerts-jsonl`, `alerts`), the inbox and the notifications, so they all say the same
thing. Plain text only, and no tenant: each front end names the tenant its own way, where it shows the text.
The UI formats times for display at the last moment.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tenant_events.alerts.open_alert import iso_to_ms
from tenant_events.server_text import shown
from tenant_events.values.alerts import StoredAlert


def _span(alert: StoredAlert) -> str:
    seconds = max(0, (alert.last_time_ms - iso_to_ms(alert.first_time)) / 1000)
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def counted(event_type: str, n: int) -> str:
    """`user.deleted`, 20 → "20 users deleted"; `organization.member.added`, 1 → "1 organization member added".

    An event type is a thing and what happened to it (its last part, already a past participle), so it reads
    as a person would say it; the raw type stays in the inbox's event list and the JSON.
    """
    if "." not in event_type:
        return f"{n} {event_type} event" + ("" if n == 1 else "s")
    *thing, happened = event_type.split(".")
    noun = " ".join(thing)
    if n != 1:
        noun = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{n} {noun} {happened}"


def people_tally(alert: StoredAlert, limit: int = 3) -> str:
    """ "25 users deleted, 4 organizations deleted" (most frequent first)."""
    ranked = sorted(alert.type_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [counted(name, n) for name, n in ranked[:limit]]
    rest = sum(n for _, n in ranked[limit:])
    return ", ".join(parts) + (f" and {rest} more" if rest else "")


def title(alert: StoredAlert) -> str:
    """The rule's name, with × N when several firings folded into the alert."""
    return f"{alert.rule_name} × {alert.occurrences}" if alert.occurrences > 1 else alert.rule_name


def why(alert: StoredAlert) -> str:
    """Why, in a line or two: the events behind it, or the one event it is about."""
    if alert.event_count == 1:
        text = alert.detail
    elif alert.occurrences > 1 and alert.event_count == alert.occurrences:
        text = f"in {_span(alert)}; latest: {alert.detail}"  # the title already says × N
    elif len(alert.type_counts) == 1:  # "20 users deleted in 55 s"
        text = f"{people_tally(alert)} in {_span(alert)}"
    else:  # "29 events in 55 s: 25 users deleted, 4 organizations deleted"
        text = f"{alert.event_count} events in {_span(alert)}: {people_tally(alert)}"
    if alert.catch_up:
        text = f"While you were away: {text}"
    # The detail quotes the event (names, emails): the tenant's words, one line whatever they hold.
    return shown(text, None)


def why_line(alert: StoredAlert) -> str:
    """`why` up to its first line break, for listings of one line per alert."""
    return why(alert).split("\n", 1)[0]


def catch_up_tally(alerts: Iterable[StoredAlert]) -> str:
    """ "mass deletion × 2, admin role assigned × 5": what a catch-up raised, one entry per rule."""
    per_rule: dict[str, int] = {}
    for alert in alerts:
        name = alert.rule_name[:1].lower() + alert.rule_name[1:]
        per_rule[name] = per_rule.get(name, 0) + alert.occurrences
    return ", ".join(f"{name} × {n}" for name, n in per_rule.items())


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def alert_json(alert: StoredAlert) -> dict[str, Any]:
    """The alert as one JSON object (the `--alerts-jsonl` and `alerts --jsonl` line)."""
    return {
        "alert_id": alert.id,
        "rule": alert.rule_id,
        "rule_name": alert.rule_name,
        "severity": alert.severity,
        "tenant": alert.tenant,
        "count": alert.event_count,
        "occurrences": alert.occurrences,
        "catch_up": alert.catch_up,
        "first_event_id": alert.first_event_id,
        "first_event_time": alert.first_time,
        "last_event_id": alert.last_event_id,
        "last_event_time": alert.last_time,
        "types": alert.type_counts,
        "detail": alert.detail,
        "raised_at": _iso(alert.raised_at),
        "read": alert.read,
    }
