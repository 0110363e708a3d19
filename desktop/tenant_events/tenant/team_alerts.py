"""The team's alert evaluation in the relay: while it holds the lease, one relay evaluates, publishes, delivers.

    LEADER ─▶ TenantLink(HubFrom: the hub's own events) ─▶ AlertRules (the built-in pack, the settings' rules)
                 ├─▶ on_alerts ─▶ AlertPublisher: tenant-events._alerts.<tenant>.<rule>.<first event> (viewers)
                 └─▶ on_alerts ─▶ DeliveryWorker(--alerts-to) ─▶ SharedOutbox (hub) before and after each send
    lease lost / stopped ─▶ the worker and the link stop; the next leader evaluates the same events itself

The relay reads the hub like a viewer does into a database of its own (`<name>-team`), so the rules see exactly
the events every viewer sees, in the hub's order. A relay that takes over evaluates from its own stored position
(a new relay: from the stream's start) and raises the same alerts under the same team names, so the hub's outbox
bucket says which of their deliveries its predecessor made (hub/team_alerts.py). "The same alerts" holds however
late it evaluates: an event's age (live, or part of a catch-up summary) is judged at the time the hub stored it,
never at the evaluating relay's clock (`HubFrom.hub_time`), so events its predecessor alerted on one by one are
not folded into one catch-up summary under a new name and sent again. Rules saved to the relay's settings file
while it holds the lease run from the next evaluation on (tenant/rules_follow.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from nats.aio.client import Client as NATS

from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.presentation import alert_json
from tenant_events.auth.secret_store import SecretStore
from tenant_events.destinations.message import AlertMessage, alert_message
from tenant_events.destinations.send import DEADLINE_S
from tenant_events.destinations.worker import SEND_GRACE_S, STOP_WAIT_S, DeliveryWorker, Target
from tenant_events.errors import ConfigError
from tenant_events.hub.connection import HubOptions
from tenant_events.hub.lease import new_holder
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import AlertPublisher, SharedOutbox, delivery_key, team_dedup_key, team_key
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.store.outbox import read_status
from tenant_events.tenant.deliveries import DestinationTargets
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.rules_follow import follow_rules, settings_stamp
from tenant_events.tenant.sources import HubFrom
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)


def team_database(name: str) -> str:
    """The relay's own database of the hub's events (the profile's database stays the tenant's)."""
    return f"{name}-team"


def check_destinations(paths: AppPaths, wanted: list[str]) -> list[str]:
    """`wanted` when each names a saved destination; ConfigError naming the first that does not."""
    known = {d.name for d in load_settings(paths).destinations}
    for name in wanted:
        if name not in known:
            shown = ", ".join(sorted(known)) or "none saved"
            raise ConfigError(
                "--alerts-to",
                f"no destination named {name!r} ({shown}); see `tenant-events destinations list`",
            )
    return wanted


class TeamDeliveries:
    """destinations/worker.py's SharedDeliveries on the hub's outbox bucket, fenced by the lease."""

    def __init__(self, outbox: SharedOutbox, tenant: str, fence: Callable[[], bool]) -> None:
        self._outbox, self._tenant, self._fence = outbox, tenant, fence

    def may_send(self) -> bool:
        return self._fence()

    def message(self, alert: StoredAlert, version: int) -> AlertMessage:
        plain = alert_message(alert, version, self._tenant)
        key = team_key(alert.rule_id, alert.first_event_id)
        return AlertMessage(
            plain.title, plain.body, plain.severity, team_dedup_key(self._tenant, key, version), plain.link
        )

    async def prior(self, alert: StoredAlert, version: int, destination: str) -> tuple[bool, int]:
        """The bucket's record; when it does not say "delivered", the receipt on the alerts stream has the last
        word (a bucket emptied or a record lost must not send an alert again), and writes the record back."""
        key = self._key(alert, version, destination)
        state = await self._outbox.state(key)
        attempts = state.get("attempts")
        tried = attempts if isinstance(attempts, int) else 0
        if state.get("state") == "delivered":
            return True, tried
        if await self._outbox.receipt(key):
            log.info("team outbox: %s was delivered (its receipt says so): its record is written back", key)
            await self._outbox.record(key, "delivered", tried, receipt=False)
            return True, tried
        return False, tried

    async def record(
        self, alert: StoredAlert, version: int, destination: str, state: str, attempts: int, error: str = ""
    ) -> None:
        await self._outbox.record(self._key(alert, version, destination), state, attempts, error)

    @staticmethod
    def _key(alert: StoredAlert, version: int, destination: str) -> str:
        return delivery_key(team_key(alert.rule_id, alert.first_event_id), version, destination)


class TeamAlerts:
    """The relay's `leader_work`: evaluate, publish and deliver the team's alerts while holding the lease."""

    def __init__(
        self,
        name: str,
        paths: AppPaths,
        hub: HubOptions,
        names: HubNames,
        destinations: list[str],
        store: Callable[[], SecretStore],
        on_note: Callable[[str], None] = lambda _: None,
        **worker_options: object,
    ) -> None:
        self.name = team_database(name)
        self.paths = paths
        self.hub = hub
        self.names = names
        self.destinations = set(destinations)
        self._store = store
        self._worker_options = worker_options
        self._note = on_note
        self.stopping: Callable[[], bool] = lambda: True  # the relay is stopping (not only losing the lease)
        self.worker: DeliveryWorker | None = None
        self._stopped: dict[str, str] = {}  # destination → the stop reason already said
        self.published = 0

    def _say_stopped(self, database: Path) -> None:
        """A destination the receiver refused (a 4xx naming the URL or token) is said once, with its reason."""
        for status in read_status(database):
            reason = status.stopped_reason
            if reason and self._stopped.get(status.name) != reason:
                self._stopped[status.name] = reason
                self._note(f"destination {status.name} stopped: {shown(reason)} (fix its URL to resume)")

    async def __call__(self, nc: NATS, fence: Callable[[], bool]) -> None:
        seen = settings_stamp(self.paths)  # before the rules are read: a save in between is taken in
        settings = load_settings(self.paths)
        link = TenantLink(
            self.name, self.paths, HubFrom(self.hub, self.names.tenant, hub_time=True), alerts=settings.alerts
        )
        outbox = await SharedOutbox.open(nc, self.names, new_holder().holder)
        publisher = AlertPublisher(nc, self.names)
        queue: asyncio.Queue[StoredAlert] = asyncio.Queue()
        targets = DestinationTargets(self.paths, self._store)

        def chosen() -> dict[str, Target]:
            return {n: t for n, t in targets().items() if n in self.destinations}

        def step(result: StepResult) -> None:
            for alert in (*result.raised, *result.updated):
                queue.put_nowait(alert)

        worker = DeliveryWorker(
            link.database_file,
            chosen,
            targets.quiet,
            shared=TeamDeliveries(outbox, self.names.tenant, fence),
            **self._worker_options,  # type: ignore[arg-type]
        )
        self.worker = worker
        link.on_alerts.extend((step, worker.kick))
        worker.on_change.append(lambda: self._say_stopped(link.database_file))
        tasks: list[asyncio.Task[None]] = []
        unfollow: Callable[[], Awaitable[None]] | None = None
        try:
            await link.start()
            await publisher.announce(outbox.relay)  # viewers show the team's alerts from now on
            self._note(
                f"evaluating the team's alerts into {self.name}; delivering to "
                f"{', '.join(sorted(self.destinations))}"
            )
            tasks.append(asyncio.create_task(worker.run(), name=f"team-deliveries-{self.names.tenant}"))
            unfollow = follow_rules(link, self.paths, settings.alerts, seen, self._note)
            while True:
                alert = await queue.get()
                key = team_key(alert.rule_id, alert.first_event_id)
                payload = {**alert_json(alert), "raised_at": alert.raised_at, "updated_at": alert.updated_at}
                if fence() and await publisher.publish(key, alert.occurrences, payload):
                    self.published += 1
        finally:
            # A lost lease lets the sends in flight finish and record their result (the next leader then
            # sends them not again); a stop of the relay waits for them only a moment.
            await worker.close(STOP_WAIT_S if self.stopping() else DEADLINE_S + SEND_GRACE_S)
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            try:
                if unfollow is not None:
                    await unfollow()
            finally:
                await link.close()
