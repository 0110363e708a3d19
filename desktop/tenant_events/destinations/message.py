"""What a delivery says: the alert as the window shows it, the link that opens it, and its keys.

A delivery is one kind of one alert version (values/alert_lifecycle.py): a firing (version n), a repeat of it,
or the resolve. Title: "[critical] Mass deletion × 3 — acme" (the tenant as the app names it: its profile);
body: the latest firing said with names, the count and the time range, and the link
`tenant-events://alert/<tenant>/<id>` (a team's: `tenant-events://team-alert/<hub tenant>/<rule>.<first event>`,
which opens the alert in every teammate's app); a resolve is one short line.

Two keys, both the same on every attempt and from every relay of a team:
  * `alert_key` names the alert (tenant and alert): PagerDuty's `dedup_key` and Opsgenie's alias, so each firing
    updates one incident instead of opening another, and the resolve closes it;
  * `dedup_key` names this delivery (`<alert_key>:<version>`, `…:<version>:repeat-<n>`, `…:resolved-<n>`): the
    `Idempotency-Key` header and `dedup_key` field of a webhook, so a receiver that de-duplicates sees each
    version once however often it was retried, and still sees the next version and a repeat.
A flood (firings of one rule within a few seconds, alerts/presentation.py FOLD_S) is one message per destination,
`folded_message`. A JSON or form webhook also gets `status` ("firing" | "resolved"), `alert_version` and `alert_key` as fields.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

from tenant_events.alerts.presentation import FOLD_S, fold_title, title, why
from tenant_events.server_text import shown
from tenant_events.url_forms import alert_link
from tenant_events.values.alert_lifecycle import DeliveryKind
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage

DEDUP_HEADER: Final = "Idempotency-Key"
DEDUP_FIELD: Final = "dedup_key"


@dataclass(frozen=True, slots=True)
class AlertMessage:
    title: str
    body: str
    severity: str
    dedup_key: str
    link: str
    alert_key: str = ""  # the alert's own key ("": a test message, not about an alert)
    status: str = "firing"  # "firing" | "resolved"
    version: int = 0


LinkOf = Callable[[StoredAlert], str]  # the link that opens an alert where its message is read


def _local(profile: str) -> LinkOf:
    """An alert's link in the app whose profile `profile` stored it (its id is that database's)."""
    return lambda alert: alert_link(profile, alert.id)


def alert_key(tenant: str, alert_id: int) -> str:
    return f"tenant-events:{tenant}:{alert_id}"


def delivery_key(alert: str, kind: DeliveryKind, version: int, nth: int = 0) -> str:
    """The key of one delivery of the alert named `alert` (see the module's docstring)."""
    if kind == "resolved":
        return f"{alert}:resolved-{nth}"
    return f"{alert}:{version}" + (f":repeat-{nth}" if kind == "repeat" else "")


def alert_message(
    alert: StoredAlert,
    kind: DeliveryKind,
    version: int,
    nth: int,
    profile: str,
    key: str | None = None,
    link_of: LinkOf | None = None,
    resolution: Triage | None = None,
) -> AlertMessage:
    """The message for one delivery of `alert`, stored in the database of tenant profile `profile`. The title,
    the link and the default key name the profile, as the app names the tenant everywhere ("demo", not the
    service's "demo-tenant"); the body adds the service's tenant id when it is another name. `key`: the alert's
    key when another name holds across copies (a team's), and `link_of` its link there. `resolution`: a
    resolve's who and why (store/alert_triage.py `last_resolve`)."""
    named = key or alert_key(profile, alert.id)
    link = (link_of or _local(profile))(alert)
    dedup = delivery_key(named, kind, version, nth)
    tenant = profile if alert.tenant in ("", profile) else f"{profile} ({alert.tenant})"
    if kind == "resolved":
        return AlertMessage(
            title=f"[resolved] {title(alert)} — {profile}",
            body=f"Resolved: {title(alert)} ({alert.severity}) · tenant {tenant}{_by(resolution)} · {link}",
            severity="info",
            dedup_key=dedup,
            link=link,
            alert_key=named,
            status="resolved",
            version=version,
        )
    first, last = alert.first_time, alert.last_time
    span = first if first == last else f"{first} – {last}"
    events = "1 event" if alert.event_count == 1 else f"{alert.event_count} events"
    again = "Still firing, not acknowledged. " if kind == "repeat" else ""
    text = (
        f"{again}{why(alert)}\n{events}, {span}\nRule: {alert.rule_name} ({alert.severity}) · tenant "
        f"{tenant}\n{link}"
    )
    return AlertMessage(
        title=f"[{alert.severity}] {title(alert)} — {profile}",
        body=text,
        severity=alert.severity,
        dedup_key=dedup,
        link=link,
        alert_key=named,
        status="firing",
        version=version,
    )


def _by(resolution: Triage | None) -> str:
    """Who resolved it and their note, on the resolve's one line (control characters escaped: a teammate's
    note comes from the hub)."""
    if resolution is None:
        return ""
    note = f" — {shown(resolution.note)}" if resolution.note.strip() else ""
    return f" · by {shown(resolution.by)}{note}"


def folded_message(
    sent: list[tuple[StoredAlert, int]], profile: str, key: str | None = None, link_of: LinkOf | None = None
) -> AlertMessage:
    """One message for a flood: firings (alert, version) of one rule within FOLD_S, said together ("[warning]
    Organization connection changed · 8 organizations — acme"), each alert's line and link in the body. Its keys
    are the first alert's (`key`: its name when another holds across copies, a team's): a pager updates one
    incident for the flood; a webhook's key names the whole fold. `link_of`: each alert's link (a team's)."""
    alerts = [a for a, _ in sent]
    link = link_of or _local(profile)
    first, version = sent[0]
    named = key or alert_key(profile, first.id)
    dedup = delivery_key(named, "firing", version) + f":fold-{len(sent)}"
    worst = max(alerts, key=lambda a: ("info", "warning", "critical").index(a.severity)).severity
    lines = [f"{title(a)}: {why(a)} · {link(a)}" for a in alerts]
    return AlertMessage(
        title=f"[{worst}] {fold_title(alerts)} — {profile}",
        body=f"{len(alerts)} alerts of one rule within {FOLD_S:g} s:\n" + "\n".join(lines),
        severity=worst,
        dedup_key=dedup,
        link=link(first),
        alert_key=named,
        status="firing",
        version=version,
    )


def shape(plugin: Any, message: AlertMessage) -> None:
    """Give an Apprise plugin this message's keys where its service has a place for them: the delivery key on
    a webhook, the alert key on a pager (which then resolves or closes on a resolve)."""
    from apprise.plugins.custom_form import NotifyForm
    from apprise.plugins.custom_json import NotifyJSON
    from apprise.plugins.custom_xml import NotifyXML
    from apprise.plugins.opsgenie import NotifyOpsgenie, OpsgenieAlertAction
    from apprise.plugins.pagerduty import NotifyPagerDuty, PagerDutyAction

    if isinstance(plugin, NotifyJSON | NotifyForm | NotifyXML):
        plugin.headers[DEDUP_HEADER] = message.dedup_key
    if isinstance(plugin, NotifyJSON | NotifyForm):
        plugin.payload_extras[DEDUP_FIELD] = message.dedup_key
        plugin.payload_extras["severity"] = message.severity
        plugin.payload_extras["status"] = message.status
        if message.alert_key:
            plugin.payload_extras["alert_key"] = message.alert_key
            plugin.payload_extras["alert_version"] = message.version  # ("version" is Apprise's own field)
        if message.link:
            plugin.payload_extras["link"] = message.link
    if isinstance(plugin, NotifyPagerDuty):
        plugin.dedup = message.alert_key or message.dedup_key
        if message.status == "resolved":
            plugin.action = PagerDutyAction.RESOLVE
    if isinstance(plugin, NotifyOpsgenie) and message.alert_key:
        plugin.alias = message.alert_key
        if message.status == "resolved":
            plugin.action = OpsgenieAlertAction.CLOSE
            plugin.send = _close_by_alias(plugin, message.alert_key)  # type: ignore[method-assign]  # this one send


def _close_by_alias(plugin: Any, alias: str) -> Callable[..., bool]:
    """Opsgenie's close of the alert named `alias` (its API's `identifierType=alias`). Apprise's own close
    finds the alert by the request ids it kept when it opened it, which a delivery in another attempt (or after
    a restart, or from another relay) never has; the alias is the same in all of them."""
    import requests
    from apprise.plugins.opsgenie import OPSGENIE_API_LOOKUP

    def send(body: str, title: str = "", notify_type: Any = None, **_kwargs: Any) -> bool:
        url = f"{OPSGENIE_API_LOOKUP[plugin.region_name]}/{quote(alias, safe='')}/close"
        payload = {"source": plugin.app_desc, "note": body}
        ok, _ = plugin._fetch(requests.post, url, payload, {"identifierType": "alias"})
        return bool(ok)

    return send


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
