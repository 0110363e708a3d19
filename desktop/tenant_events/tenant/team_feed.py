"""A hub tenant's alerts from the team's relay, instead of this computer evaluating the same events again.

    hub: tenant-events._alerts.<tenant>.evaluating present? ── no ──▶ the link's own rules run as before
        │ yes
        ▼
    link.team_alerts = True (its rules stay unattached) ─▶ TeamAlertFeed ─▶ TeamAlertStore (the database)
        ─▶ StepResult ─▶ the link's `on_alerts` observers (inbox, tray badge, notifications, `--alerts-jsonl`)

Call `open_team_view(link)` before `link.start()` and `start()` after it. The team's alerts carry the mark
" (team)" on their rule name (store/team_alert_rows.py); the viewer's own destinations get none of them (the
relay delivers for the team), and the team's triage finds them by rule and first event as before. The view's
start sets aside the alerts this computer's own rules raised before (the relay evaluates the same events), so
the inbox never shows both for the same events.

A relay may start evaluating for the team after the viewer: `TeamAlertWatch` (started after `link.start()` when
there was no view) asks the hub every TEAM_CHECK_EVERY seconds, and once the relay's mark is there it stops the
link's own rules (a step in flight completes first), then starts the view.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, cast

from tenant_events.alerts.evaluator import StepResult
from tenant_events.cancelling import cancelled_meanwhile
from tenant_events.errors import StorageError
from tenant_events.hub.connection import close_connection, connect, describe
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import TeamAlertFeed, team_evaluates
from tenant_events.store.team_alert_rows import TeamAlertRow, TeamAlertStore
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sources import HubFrom
from tenant_events.values.alerts import Severity

log = logging.getLogger(__name__)
_SEVERITIES = ("info", "warning", "critical")
CHECK_TIMEOUT = 10.0  # seconds the hub has to say whether a relay evaluates for the team
TEAM_CHECK_EVERY = 5.0  # seconds between a viewer's questions whether a relay evaluates for the team now


def team_row(p: dict[str, Any]) -> TeamAlertRow:
    """A hub payload as a row; ValueError when a field is missing or of the wrong kind."""
    try:
        severity = str(p["severity"])
        if severity not in _SEVERITIES:
            raise ValueError(f"severity {severity[:20]!r}")
        types = {str(k): int(v) for k, v in dict(p.get("types") or {}).items()}
        return TeamAlertRow(
            key=str(p["key"]),
            version=int(p["version"]),
            rule_id=str(p["rule"]),
            rule_name=str(p["rule_name"]),
            severity=cast(Severity, severity),
            tenant=str(p["tenant"]),
            catch_up=bool(p.get("catch_up")),
            occurrences=int(p["occurrences"]),
            event_count=int(p["count"]),
            first_event_id=str(p["first_event_id"]),
            last_event_id=str(p["last_event_id"]),
            first_time=str(p["first_event_time"]),
            last_time=str(p["last_event_time"]),
            type_counts=types,
            detail=str(p.get("detail") or ""),
            raised_at=float(p["raised_at"]),
            updated_at=float(p["updated_at"]),
            resolved=p.get("state") == "resolved",
            fired_at=float(p.get("fired_ts") or p["updated_at"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a team alert ({exc})") from None


class TeamAlertView:
    """Stores the hub's team alerts in the link's database and hands them to the link's observers."""

    def __init__(self, link: TenantLink, nc: Any, names: HubNames) -> None:
        self.link = link
        self._nc = nc
        self._names = names
        self._feed: TeamAlertFeed | None = None
        self._store: TeamAlertStore | None = None
        self._versions: dict[int, int] = {}  # alert id → the version last handed on
        self.stored = 0

    async def start(self) -> None:
        """After `link.start()` (its database exists): every team alert, then each as it comes."""
        self._store = TeamAlertStore(self.link.database_file)
        retired = self._store.retire_own()
        if retired:
            log.info(
                "%s: %d alerts of this computer's rules set aside for the team's", self.link.name, retired
            )
        self._feed = TeamAlertFeed(self._nc, self._names, self._arrived)
        await self._feed.start()

    async def stop(self) -> None:
        if self._feed is not None:
            await self._feed.stop()
        with contextlib.suppress(Exception):
            await close_connection(self._nc)
        if self._store is not None:
            self._store.close()
            self._store = None

    def _arrived(self, payload: dict[str, Any]) -> None:
        if self._store is None:
            return
        try:
            stored = self._store.store(team_row(payload))
        except (ValueError, StorageError) as exc:
            log.warning("%s: a team alert was not stored: %s", self.link.name, exc)
            return
        if stored is None:
            return
        alert, new = stored
        self.stored += new
        step = StepResult()
        step.add(alert, new=new)
        before = self._versions.get(alert.id, alert.occurrences)
        self._versions[alert.id] = alert.occurrences
        if not new and alert.occurrences > before:  # a new version: said again
            step.refired.add(alert.id)
        if alert.triage == "resolved":
            step.settled.append(alert)
        for callback in list(self.link.on_alerts):
            try:
                callback(step)
            except Exception:
                log.exception("an alert observer failed")


class TeamAlertWatch:
    """Until the hub's relay evaluates for the team, asks every `every` seconds; then switches the link to the
    team's alerts and calls `on_switch(view)`. `stop()` also stops the view it started."""

    def __init__(
        self,
        link: TenantLink,
        on_switch: Callable[[TeamAlertView], None] = lambda _: None,
        every: float = TEAM_CHECK_EVERY,
    ) -> None:
        self.link = link
        self.every = every
        self.view: TeamAlertView | None = None
        self._on_switch = on_switch
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch(), name=f"team-alert-watch-{self.link.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.view is not None:
            await self.view.stop()

    async def _watch(self) -> None:
        while self.view is None:
            await asyncio.sleep(self.every)
            view = await open_team_view(self.link)
            if view is None:
                cancelled_meanwhile()  # a stop that met the hub's answer as it came: no more rounds
                continue
            if self.link.rules is not None:
                await self.link.rules.detach()
            try:
                await view.start()
            except Exception as exc:  # the database cannot take them: the team's alerts are asked for again
                log.warning("%s: cannot show the team's alerts: %s", self.link.name, exc)
                await view.stop()
                continue
            self.view = view
            self._on_switch(view)


async def open_team_view(link: TenantLink) -> TeamAlertView | None:
    """A view of the team's alerts when `link` reads a hub whose relay evaluates for the team (the link's own
    rules then do not run); None otherwise, or when the hub cannot say — unreachable, refusing the sign-in, not
    trusted: the link's own start then reports that, and its rules run as before."""
    source = link.source
    if not isinstance(source, HubFrom) or link.rules is None:
        return None
    names = HubNames(source.hub_tenant)
    try:
        probe = await asyncio.wait_for(connect(source.options, reconnect=False), CHECK_TIMEOUT)
        try:
            evaluated = await team_evaluates(probe.jetstream(timeout=5.0), names)
        finally:
            with contextlib.suppress(Exception):
                await close_connection(probe)
        if not evaluated:
            return None
        nc = await asyncio.wait_for(connect(source.options, reconnect=True), CHECK_TIMEOUT)
    except Exception as exc:
        log.info("%s: team alerts not checked (%s); the rules run here", link.name, describe(exc))
        return None
    link.team_alerts = True
    return TeamAlertView(link, nc, names)
