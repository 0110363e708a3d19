"""The team's alert evaluation in the relay: while it holds the lease, one relay evaluates, publishes, delivers.

    LEADER ─▶ EvalState.load (hub/eval_state.py): where the last leader's evaluation stood, its alerts
           ─▶ TenantLink(HubFrom: the hub's own events) ─▶ AlertRules (the built-in pack, the settings' rules),
              whose evaluator adopts that state before its first step (store/team_state.py)
                 ├─▶ on_alerts ─▶ AlertPublisher: tenant-events._alerts.<tenant>.<rule>.<first event> (viewers)
                 ├─▶ on_alerts ─▶ EvalState.save: the alerts each step touched, then its position
                 └─▶ on_alerts ─▶ DeliveryWorker(--alerts-to) ─▶ SharedOutbox (hub) before and after each send
    lease lost / stopped ─▶ the worker and the link stop; the next leader goes on from the saved state

The relay reads the hub like a viewer does into a database of its own (`<name>-team`), so the rules see exactly
the events every viewer sees, in the hub's order. A relay that takes over adopts the team's evaluation state
from the hub — its alerts with their versions, and the position — so a firing after the takeover is version n+1
of the alert its predecessor raised, delivered under that version's dedup key, and what its predecessor
delivered is found in the hub's outbox bucket (hub/team_alerts.py). Without a saved state (the first leader) it
evaluates from its own stored position. An event's age (live, or part of a catch-up summary) is judged at the
time the hub stored it, never at the evaluating relay's clock (`HubFrom.hub_time`), so re-evaluating a few events
after a takeover raises what its predecessor raised. Rules saved to the relay's settings file while it holds the
lease run from the next evaluation on (tenant/rules_follow.py).
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
from tenant_events.cancelling import cancelled_meanwhile
from tenant_events.destinations.message import AlertMessage, alert_message, folded_message
from tenant_events.destinations.send import DEADLINE_S
from tenant_events.destinations.worker import SEND_GRACE_S, STOP_WAIT_S, DeliveryWorker, Target
from tenant_events.errors import ConfigError
from tenant_events.hub.connection import HubOptions
from tenant_events.hub.eval_state import EvalState
from tenant_events.hub.lease import new_holder
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import AlertPublisher, SharedOutbox, delivery_key, team_alert_key, team_key
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.settings.silences_file import SilenceBook
from tenant_events.store.outbox import Delivery, read_status
from tenant_events.store.team_state import carried, position_at
from tenant_events.tenant.deliveries import DestinationTargets, silence_check
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.rules_follow import follow_rules, settings_stamp
from tenant_events.tenant.sources import HubFrom
from tenant_events.tenant.team_silences import TeamSilencesMirror, start_silences_mirror
from tenant_events.tenant.team_triage import TeamTriageMirror, describe, start_mirror
from tenant_events.url_forms import team_alert_link
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage

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
    """destinations/shared_deliveries.py's SharedDeliveries on the hub's outbox bucket, fenced by the lease."""

    def __init__(self, outbox: SharedOutbox, tenant: str, fence: Callable[[], bool]) -> None:
        self._outbox, self._tenant, self._fence = outbox, tenant, fence

    def may_send(self) -> bool:
        return self._fence()

    def message(
        self, alert: StoredAlert, delivery: Delivery, resolution: Triage | None = None
    ) -> AlertMessage:
        key = team_alert_key(self._tenant, team_key(alert.rule_id, alert.first_event_id))
        d = delivery
        return alert_message(alert, d.kind, d.version, d.nth, self._tenant, key, self._link, resolution)

    def folded(self, sent: list[tuple[StoredAlert, Delivery]]) -> AlertMessage:
        first = sent[0][0]
        key = team_alert_key(self._tenant, team_key(first.rule_id, first.first_event_id))
        return folded_message([(a, d.version) for a, d in sent], self._tenant, key, self._link)

    def _link(self, alert: StoredAlert) -> str:
        """The link that opens the alert in every teammate's app: by its name on the hub, not this relay's id."""
        return team_alert_link(self._tenant, team_key(alert.rule_id, alert.first_event_id))

    async def prior(self, alert: StoredAlert, delivery: Delivery) -> tuple[bool, int]:
        """The bucket's record; when it does not say "delivered", the receipt on the alerts stream has the last
        word (a bucket emptied or a record lost must not send an alert again), and writes the record back."""
        key = self._key(alert, delivery)
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
        self, alert: StoredAlert, delivery: Delivery, state: str, attempts: int, error: str = ""
    ) -> None:
        await self._outbox.record(self._key(alert, delivery), state, attempts, error)

    @staticmethod
    def _key(alert: StoredAlert, d: Delivery) -> str:
        return delivery_key(
            team_key(alert.rule_id, alert.first_event_id), d.kind, d.version, d.nth, d.destination
        )


POSITION_EVERY = 5.0  # seconds between saves of the evaluation's position when no alert changed
SAVE_AT_STOP_S = 5.0  # how long a stopping leader tries to save its last step


def _watermark(link: TenantLink) -> int | None:
    return link.rules.watermark if link.rules is not None else None


class StateSaver:
    """Saves what each step changed to the hub (hub/eval_state.py), one save at a time, in order; what a save
    could not write is carried into the next. Steps that changed no alert are not handed to observers: every
    POSITION_EVERY seconds the evaluator's watermark is saved as the position too, so a takeover after a quiet
    hour does not evaluate that hour again."""

    def __init__(self, state: EvalState, database: Path, watermark: Callable[[], int | None]) -> None:
        self._state, self._database, self._watermark = state, database, watermark
        self._ids: dict[int, None] = {}
        self._position: tuple[str, int] | None = None
        self._saved_upto: int | None = None
        self._wake = asyncio.Event()

    def add(self, result: StepResult) -> None:
        for alert in (*result.raised, *result.updated, *result.settled):
            self._ids[alert.id] = None
        if result.position is not None:
            self._position = result.position
        self._wake.set()

    async def run(self, fence: Callable[[], bool]) -> None:
        """Save after each step (and the position every POSITION_EVERY s) until cancelled or the lease is gone."""
        while fence():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POSITION_EVERY)
            self._wake.clear()
            if not await self.save(fence):
                await asyncio.sleep(1.0)
                self._wake.set()

    async def save(self, fence: Callable[[], bool]) -> bool:
        """One save of what is waiting; False when the hub did not take it (it waits for the next)."""
        upto = self._watermark()
        if not self._ids and self._position is None and upto is not None and upto != self._saved_upto:
            self._position = await asyncio.to_thread(position_at, self._database, upto)
        ids, position = list(self._ids), self._position
        if (not ids and position is None) or not fence():
            return True  # nothing to save, or another relay leads: it saves from now on
        items = await asyncio.to_thread(carried, self._database, ids)
        keyed = [(team_key(i.alert.rule_id, i.alert.first_event_id), i) for i in items]
        if not await self._state.save(keyed, position):
            return False
        for alert_id in ids:
            self._ids.pop(alert_id, None)
        if self._position == position:
            self._position = None
            self._saved_upto = upto
        return True


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
        self._unreadable: dict[str, str] = {}  # destination → why its URL cannot be read, as already said
        self.published = 0
        self._failed = False  # the last run failed: the next start says the alerts run again

    def _say_stopped(self, database: Path) -> None:
        """A destination the receiver refused (a 4xx naming the URL or token) is said once, with its reason."""
        for status in read_status(database):
            reason = status.stopped_reason
            if reason and self._stopped.get(status.name) != reason:
                self._stopped[status.name] = reason
                self._note(f"destination {status.name} stopped: {shown(reason)} (fix its URL to resume)")

    def _say_unreadable(self, targets: dict[str, Target]) -> None:
        """A destination whose URL cannot be read now (its alerts wait) is said once per reason, and when it is
        read again: a relay never stops delivering without saying so."""
        for name, target in sorted(targets.items()):
            said = self._unreadable.get(name)
            if target.problem and said != target.problem:
                self._unreadable[name] = target.problem
                self._note(
                    f"destination {name}: {shown(target.problem)}; its alerts wait until it can be read"
                )
            elif not target.problem and said is not None:
                del self._unreadable[name]
                self._note(f"destination {name}: its URL is read again; delivering")

    async def _mirror_triage(self, link: TenantLink) -> TeamTriageMirror | None:
        """The team's triage (the viewers' acknowledgements, snoozes and resolves on the hub) kept in the
        relay's database, so an acknowledged alert is not repeated and a resolve reaches the destinations;
        None (said once) when the hub does not let this relay read it: the rest goes on."""
        try:
            mirror = await start_mirror(link.database_file, self.hub, self.names.tenant)
        except Exception as exc:
            self._note(
                f"the team's triage is not followed ({describe(exc)}): alerts repeat until resolved here"
            )
            return None
        link.on_alerts.append(mirror.retry)  # an entry may be for an alert raised just now
        mirror.on_applied.append(link.nudge_alerts)  # the rules and the deliveries take it in at once
        return mirror

    async def _mirror_silences(self) -> TeamSilencesMirror | None:
        """The team's silences (hub/silences.py) kept in this machine's silences file, which the relay's
        deliveries honour (`silence_check`); None (said once) when the hub does not let this relay read them."""
        try:
            return await start_silences_mirror(
                SilenceBook.of(self.paths), self.hub, self.names.tenant, profile=self.name
            )
        except Exception as exc:
            self._note(f"the team's silences are not followed ({describe(exc)}): only this machine's hold")
            return None

    async def __call__(self, nc: NATS, fence: Callable[[], bool]) -> None:
        """Until cancelled; a failure is raised to the relay, which starts it again (and the next start says
        that the alerts run again)."""
        try:
            await self._run(nc, fence)
        except Exception:
            self._failed = True
            raise

    async def _run(self, nc: NATS, fence: Callable[[], bool]) -> None:
        seen = settings_stamp(self.paths)  # before the rules are read: a save in between is taken in
        settings = load_settings(self.paths)
        link = TenantLink(
            self.name, self.paths, HubFrom(self.hub, self.names.tenant, hub_time=True), alerts=settings.alerts
        )
        outbox = await SharedOutbox.open(nc, self.names, new_holder().holder)
        publisher = AlertPublisher(nc, self.names)
        state = await EvalState.open(nc, self.names)
        resume = await state.load()
        if resume is not None and link.rules is not None:
            link.rules.resume = resume
            self._note(f"going on from the team's evaluation: {len(resume.alerts)} alerts")
        saver = StateSaver(state, link.database_file, lambda: _watermark(link))
        queue: asyncio.Queue[StoredAlert] = asyncio.Queue()
        targets = DestinationTargets(self.paths, self._store)

        def chosen() -> dict[str, Target]:
            found = {n: t for n, t in targets().items() if n in self.destinations}
            self._say_unreadable(found)
            return found

        def step(result: StepResult) -> None:
            for alert in (*result.raised, *result.updated, *result.settled):
                queue.put_nowait(alert)
            saver.add(result)

        worker = DeliveryWorker(
            link.database_file,
            chosen,
            targets.quiet,
            shared=TeamDeliveries(outbox, self.names.tenant, fence),
            silenced=silence_check(self.paths, self.name),
            **self._worker_options,  # type: ignore[arg-type]
        )
        self.worker = worker
        link.on_alerts.extend((step, worker.kick))
        worker.on_change.append(lambda: self._say_stopped(link.database_file))
        tasks: list[asyncio.Task[None]] = []
        saving: asyncio.Task[None] | None = None
        mirror: TeamTriageMirror | None = None
        silences: TeamSilencesMirror | None = None
        unfollow: Callable[[], Awaitable[None]] | None = None
        try:
            # the team's silences first: those made before this relay took the lease hold its first deliveries
            silences = await self._mirror_silences()
            await link.start()
            await publisher.announce(outbox.relay)  # viewers show the team's alerts from now on
            cancelled_meanwhile()
            again, self._failed = " again" if self._failed else "", False
            self._note(
                f"evaluating the team's alerts{again} into {self.name}; delivering to "
                f"{', '.join(sorted(self.destinations))}"
            )
            tasks.append(asyncio.create_task(worker.run(), name=f"team-deliveries-{self.names.tenant}"))
            saving = asyncio.create_task(saver.run(fence), name=f"team-state-{self.names.tenant}")
            mirror = await self._mirror_triage(link)
            unfollow = follow_rules(link, self.paths, settings.alerts, seen, self._note)
            cancelled_meanwhile()  # a lost lease's stop that met a start-up wait as it finished ends it here
            while True:
                alert = await queue.get()
                key = team_key(alert.rule_id, alert.first_event_id)
                payload = {
                    **alert_json(alert),
                    "raised_at": alert.raised_at,
                    "updated_at": alert.updated_at,
                    "fired_ts": alert.fired_at or alert.raised_at,
                }
                if fence() and await publisher.publish(key, alert.occurrences, payload):
                    self.published += 1
        finally:
            if mirror is not None:
                await mirror.stop()
            if silences is not None:
                await silences.stop()
            # A lost lease lets the sends in flight finish and record their result (the next leader then
            # sends them not again); a stop of the relay waits for them only a moment.
            await worker.close(STOP_WAIT_S if self.stopping() else DEADLINE_S + SEND_GRACE_S)
            if saving is not None:  # (one last save follows the link's last step, below)
                saving.cancel()
                tasks.append(saving)
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            try:
                if unfollow is not None:
                    await unfollow()
            finally:
                await link.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(saver.save(fence), SAVE_AT_STOP_S)
