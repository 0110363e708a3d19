"""How an alert reads to a person: its title, one or two lines of why, the catch-up tally, its JSON line.

Shared by the CLI (`stream --alerts-jsonl`, `alerts`), the inbox and the notifications, so they all say the same
thing. Plain text only, and no tenant: each front end names the tenant its own way, where it shows the text.
The UI formats times for display at the last moment.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tenant_events.alerts.compiled_rule import GROUP_MARK
from tenant_events.alerts.open_alert import iso_to_ms
from tenant_events.server_text import shown
from tenant_events.values.alerts import Firing, StoredAlert


def _span(first_ms: int, last_ms: int) -> str:
    seconds = max(0, (last_ms - first_ms) / 1000)
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


def people_tally(type_counts: dict[str, int], limit: int = 3) -> str:
    """ "25 users deleted, 4 organizations deleted" (most frequent first)."""
    ranked = sorted(type_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [counted(name, n) for name, n in ranked[:limit]]
    rest = sum(n for _, n in ranked[limit:])
    return ", ".join(parts) + (f" and {rest} more" if rest else "")


def title(alert: StoredAlert) -> str:
    """The rule's name (with its group), with × N when several firings folded into the alert."""
    return f"{alert.rule_name} × {alert.occurrences}" if alert.occurrences > 1 else alert.rule_name


FOLD_S = 5.0  # firings of one rule this close together are said once: one notification, one delivery


def fold_title(alerts: list[StoredAlert]) -> str:
    """One line for several alerts of one rule said together: "Organization connection changed · 8
    organizations" (the groups' kind when they share one, else "groups"; "× 3" for one alert's firings)."""
    if len(alerts) == 1:
        return title(alerts[0])
    name = alerts[0].rule_name.partition(GROUP_MARK)[0]
    labels = [a.rule_name.partition(GROUP_MARK)[2] for a in alerts]
    kinds = {label.split(" ", 1)[0] for label in labels}
    kind = kinds.pop() if len(kinds) == 1 and all(labels) else ""
    noun = {"IP": "IPs", "": "groups"}.get(kind, f"{kind}s")
    if not any(labels):
        return f"{name} × {sum(a.occurrences for a in alerts)}"
    return f"{name} · {len(alerts)} {noun}"


def fold_why(alerts: list[StoredAlert], limit: int = 3) -> str:
    """The lines of a fold: the latest few alerts' own why (the one that fired last first, as the inbox orders
    them), then how many more ("… and 5 more")."""
    latest = sorted(alerts, key=lambda a: (a.fired_at or a.raised_at, a.id), reverse=True)
    lines = [why(a, titled=False) for a in latest[:limit]]
    rest = len(alerts) - len(lines)
    return "\n".join(lines) + (f"\n… and {rest} more" if rest else "")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def firing_text(firing: Firing, detail: str) -> str:
    """One firing in its own terms: the window that crossed or the sequence ("30 groups deleted in 44 s",
    "2 events in 4 min: …"), or the one event (`detail`)."""
    if firing.events == 1:
        return detail
    span = _span(firing.first_ms, firing.last_ms)
    if len(firing.types) == 1:  # "20 users deleted in 55 s"
        return f"{people_tally(firing.types)} in {span}"
    return f"{firing.events} events in {span}: {people_tally(firing.types)}"  # "29 events in 55 s: …"


def why(alert: StoredAlert, *, titled: bool = True) -> str:
    """Why, in a line or two, in the terms of its latest firing: its events (a threshold's window, a sequence),
    or the one event it is about; firings of one event each folded together say their span and the latest.
    `titled` False: said without the alert's title (a flood's line), which would have given their number."""
    latest = alert.latest
    first_ms = _first_ms(alert)
    if alert.occurrences > 1 and alert.event_count == alert.occurrences:
        count = "" if titled else f"{alert.occurrences} firings "  # the title says × N
        text = f"{count}in {_span(first_ms, alert.last_time_ms)}; latest: {alert.detail}"
    else:
        text = firing_text(latest, alert.detail)
        if alert.occurrences > 1:
            text += f"; its {_ordinal(latest.version)} firing, {alert.event_count:,} events in all"
    if alert.catch_up:
        text = f"While you were away: {text}"
    # The detail quotes the event (names, emails): the tenant's words, one line whatever they hold.
    return shown(text, None)


def _first_ms(alert: StoredAlert) -> int:
    try:
        return iso_to_ms(alert.first_time)
    except ValueError:
        return alert.last_time_ms


def why_line(alert: StoredAlert) -> str:
    """`why` up to its first line break, for listings of one line per alert."""
    return why(alert).split("\n", 1)[0]


def catch_up_tally(alerts: Iterable[StoredAlert]) -> str:
    """ "mass deletion × 2, mass deletion by one actor × 3 (3 groups), admin role assigned × 5": what a
    catch-up raised, one entry per rule (a grouped rule's alerts, one per group, counted together)."""
    per_rule: dict[str, list[int]] = {}
    for alert in alerts:
        base = alert.rule_name.partition(GROUP_MARK)[0]
        name = base[:1].lower() + base[1:]
        firings, groups = per_rule.setdefault(name, [0, 0])
        per_rule[name] = [firings + alert.occurrences, groups + (GROUP_MARK in alert.rule_name)]
    return ", ".join(
        f"{name} × {n}" + (f" ({groups} groups)" if groups > 1 else "")
        for name, (n, groups) in per_rule.items()
    )


def iso_stamp(seconds: float) -> str:
    """A wall-clock time (unix s) as ISO 8601 UTC, to the millisecond."""
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
        "raised_at": iso_stamp(alert.raised_at),
        "read": alert.read,
        "version": alert.version,
        "state": str(alert.phase(time.time())),
        "fired_at": iso_stamp(alert.fired_at or alert.raised_at),
        "firing": alert.latest.as_json(),
    }
