"""The team's alerts on the hub: where the lease-holding relay publishes them, and what it has delivered.

    stream  TENANT_EVENTS_<TENANT>_ALERTS   subject tenant-events._alerts.<tenant>.<rule id>.<first event id>
              the alert as JSON each time it is raised or grows; the newest message per subject is the alert now
            subject tenant-events._alerts.<tenant>.evaluating: a relay evaluates for the team (viewers then show
              these alerts instead of evaluating their own: tenant/team_feed.py)
            subject tenant-events._alerts.<tenant>._delivered.<delivery key>: a relay delivered it (the receipt)
    bucket  TENANT_EVENTS_<TENANT>_OUTBOX   key <rule id>.<first event id>.<delivery>.<destination token>
              (<delivery>: the version, `<version>r<n>` for its nth repeat, `resolved<n>` for the nth resolve)
              {"state": "delivered" | "pending", "attempts", "at", "relay"}: the team's delivery state

An alert is named by its rule and its first event (hub/triage.py's `alert_key`), never by a relay's database row:
relays that evaluate the same events in the same order raise the same alerts, so a relay taking over the lease
finds in the bucket what its predecessor delivered, and sends the rest under the same dedup key
(`team_dedup_key`) — a receiver that de-duplicates sees each alert version once.

Why `_alerts` and not `<tenant>.alerts`: the event stream holds `tenant-events.<tenant>.>`, JetStream refuses a
second stream over the same subjects, and an alert in the event stream would break the relay's sequence checks
(hub/publisher.py). Hub tenant names never start with `_`, so the subjects cannot meet; viewers may publish
nothing under `tenant-events.>` (packaging/nats/accounts.conf), so they cannot publish an alert, and they may
write only their own keys of the triage bucket, never this one.

The bucket is the relays' working record; the receipts on the alerts stream are its backup, on a stream only
collectors write. A relay that finds no "delivered" record (the bucket was emptied, a record lost) but a receipt
does not send again: it writes the record back from the receipt (`TeamDeliveries.prior`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
import zlib
from collections.abc import Callable
from typing import Any, Final

import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import (
    DeliverPolicy,
    DiscardPolicy,
    KeyValueConfig,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.kv import KeyValue

from tenant_events.hub.subjects import PREFIX, HubNames
from tenant_events.hub.triage import alert_key

log = logging.getLogger(__name__)
ALERTS_TOKEN: Final = "_alerts"
EVALUATING: Final = "evaluating"
DELIVERED: Final = "_delivered"
ALERT_MAX: Final = 1024 * 1024  # bytes of one message on the alerts stream (the server's default payload cap)
MSG_ID: Final = "Nats-Msg-Id"
_NAME_IN_USE: Final = 10058


def alerts_stream(names: HubNames) -> str:
    return f"{names.stream}_ALERTS"


def outbox_bucket(names: HubNames) -> str:
    return f"{names.stream}_OUTBOX"


def alerts_subjects(names: HubNames) -> str:
    return f"{PREFIX}.{ALERTS_TOKEN}.{names.tenant}.>"


def team_key(rule_id: str, first_event_id: str) -> str:
    """The team's name of an alert (`<rule>.<first event>`); ids that cannot be key tokens are hashed."""
    try:
        return alert_key(rule_id, first_event_id)
    except ValueError:
        digest = hashlib.sha256(f"{rule_id}\0{first_event_id}".encode()).hexdigest()[:32]
        return f"h{digest[:16]}.{digest[16:]}"


def alert_subject(names: HubNames, key: str) -> str:
    return f"{PREFIX}.{ALERTS_TOKEN}.{names.tenant}.{key}"


def receipt_subject(names: HubNames, delivery: str) -> str:
    """Where a relay says it delivered `delivery` (a `delivery_key`): five tokens after the tenant, so never an
    alert's subject (two) nor the mark (one)."""
    return f"{PREFIX}.{ALERTS_TOKEN}.{names.tenant}.{DELIVERED}.{delivery}"


def marker_subject(names: HubNames) -> str:
    return f"{PREFIX}.{ALERTS_TOKEN}.{names.tenant}.{EVALUATING}"


async def team_evaluates(js: JetStreamContext, names: HubNames) -> bool:
    """Whether a relay has evaluated the rules for the team on this hub (its mark is in the alerts stream)."""
    try:
        await js.get_last_msg(alerts_stream(names), marker_subject(names))
    except nats.js.errors.NotFoundError:
        return False
    return True


def team_alert_key(tenant: str, key: str) -> str:
    """The alert's key every relay sends (a pager's incident): the hub tenant and the alert's team name."""
    return f"tenant-events:{tenant}:{key}"


def team_dedup_key(tenant: str, key: str, version: int) -> str:
    """The dedup key every relay sends for one alert version (destinations/message.py `delivery_key`)."""
    return f"{team_alert_key(tenant, key)}:{version}"


def destination_token(name: str) -> str:
    """A destination name as one key token (names may hold dots)."""
    return "d" + hashlib.sha256(name.encode()).hexdigest()[:16]


def delivery_key(key: str, kind: str, version: int, nth: int, destination: str) -> str:
    if kind == "resolved":
        token = f"resolved{nth}"
    else:
        token = f"{version}r{nth}" if kind == "repeat" else str(version)
    return f"{key}.{token}.{destination_token(destination)}"


async def provision_alerts_stream(
    js: JetStreamContext, names: HubNames, replicas: int, max_age: float | None
) -> None:
    """The alerts stream, created when missing (by a collector; hub/provision.py makes the outbox bucket)."""
    config = StreamConfig(
        name=alerts_stream(names),
        description=f"Tenant Events: the team's alerts of tenant {names.tenant}",
        subjects=[alerts_subjects(names)],
        retention=RetentionPolicy.LIMITS,
        discard=DiscardPolicy.OLD,
        storage=StorageType.FILE,
        max_age=max_age,
        max_msgs_per_subject=1,  # the alert as it is now
        num_replicas=replicas,
        duplicate_window=600.0,
        allow_direct=True,
    )
    try:
        await js.stream_info(config.name or "")
    except nats.js.errors.NotFoundError:
        try:
            await js.add_stream(config)
        except nats.js.errors.APIError as exc:
            if exc.err_code != _NAME_IN_USE:
                raise


def outbox_config(names: HubNames, replicas: int, max_age: float | None) -> KeyValueConfig:
    return KeyValueConfig(
        bucket=outbox_bucket(names),
        history=1,
        replicas=replicas,
        ttl=max_age,
        storage=StorageType.FILE,
        description="Tenant Events: the team's alert deliveries",
    )


class SharedOutbox:
    """The team's delivery state in the hub's outbox bucket; every call answers even when the hub does not
    (a read that fails counts as "not delivered": a repeat under the same dedup key is safe, a loss is not)."""

    def __init__(self, kv: KeyValue, relay: str, js: JetStreamContext, names: HubNames) -> None:
        self._kv = kv
        self.relay = relay
        self._js = js
        self._names = names

    @classmethod
    async def open(cls, nc: NATS, names: HubNames, relay: str) -> SharedOutbox:
        js = nc.jetstream(timeout=5.0)
        return cls(await js.key_value(outbox_bucket(names)), relay, js, names)

    async def receipt(self, key: str) -> bool:
        """Whether a relay left a receipt of `key` on the alerts stream (False when the hub does not answer)."""
        try:
            await self._js.get_last_msg(alerts_stream(self._names), receipt_subject(self._names, key))
        except nats.js.errors.NotFoundError:
            return False
        except (TimeoutError, nats.errors.Error) as exc:
            log.info("team outbox: cannot read the receipt of %s (%s)", key, exc)
            return False
        return True

    async def state(self, key: str) -> dict[str, Any]:
        """The stored record of one delivery ({} when none or unreadable)."""
        try:
            entry = await self._kv.get(key)
        except nats.js.errors.KeyNotFoundError:
            return {}
        except (TimeoutError, nats.errors.Error) as exc:
            log.info("team outbox: cannot read %s (%s)", key, exc)
            return {}
        try:
            value = orjson.loads(entry.value or b"{}")
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    async def record(
        self, key: str, state: str, attempts: int, error: str = "", *, receipt: bool = True
    ) -> None:
        """Write the record; a delivery also leaves its receipt on the alerts stream (not when `receipt` is
        False: the record is being written back from one)."""
        record = {
            "state": state,
            "attempts": attempts,
            "at": time.time(),
            "relay": self.relay,
            "error": error,
        }
        try:
            await self._kv.put(key, orjson.dumps(record))
        except (TimeoutError, nats.errors.Error) as exc:  # a takeover then sends it again, same dedup key
            log.warning("team outbox: cannot record %s (%s)", key, exc)
        if state != "delivered" or not receipt:
            return
        note = orjson.dumps({"at": record["at"], "relay": self.relay})
        try:
            await self._js.publish(
                receipt_subject(self._names, key), note, headers={MSG_ID: f"delivered:{key}"}
            )
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("team outbox: the hub did not take the receipt of %s (%s)", key, exc)


class AlertPublisher:
    """Publishes the team's alerts on the alerts stream; a repeat (same version and count) is stored once."""

    def __init__(self, nc: NATS, names: HubNames) -> None:
        self._js = nc.jetstream(timeout=5.0)
        self._names = names

    async def publish(self, key: str, version: int, alert: dict[str, Any]) -> bool:
        """True once the hub stored it (or had it); False when it did not answer (the next update carries it)."""
        payload = {**alert, "key": key, "version": version, "hub_tenant": self._names.tenant}
        # (the detail too: a catch-up alert's latest event is worded again once the relay knows its names)
        detail = str(alert.get("detail") or "").encode()
        msg_id = f"{key}:{version}:{alert.get('count')}:{zlib.crc32(detail):08x}:{alert.get('state')}"
        try:
            await self._js.publish(
                alert_subject(self._names, key), orjson.dumps(payload), headers={MSG_ID: msg_id}
            )
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("team alerts: the hub did not take %s (%s)", key, exc)
            return False
        return True

    async def announce(self, relay: str) -> None:
        """Mark the hub as one whose alerts a relay evaluates (viewers switch to them)."""
        marker = orjson.dumps({"relay": relay, "at": time.time()})
        try:
            await self._js.publish(marker_subject(self._names), marker)
        except (TimeoutError, nats.errors.Error) as exc:
            log.warning("team alerts: the hub did not take the relay's mark (%s)", exc)


FEED_RETRIES_S: Final = (1.0, 2.0, 4.0, 8.0, 16.0)  # pauses before asking a hub that answered late again


class TeamAlertFeed:
    """Every team alert on the hub, oldest first, then each as it is raised or grows: `on_alert(payload)`."""

    def __init__(
        self,
        nc: NATS,
        names: HubNames,
        on_alert: Callable[[dict[str, Any]], None],
        timeout: float = 5.0,
    ) -> None:
        self._js = nc.jetstream(timeout=timeout)
        self._names = names
        self._on_alert = on_alert
        self._sub: Any = None

    async def start(self) -> None:
        """Subscribe; a hub that does not answer within the timeout (a busy cluster making the consumer) is
        asked again after each of FEED_RETRIES_S, then its TimeoutError is raised."""
        subject = f"{PREFIX}.{ALERTS_TOKEN}.{self._names.tenant}.*.*"
        for pause in (*FEED_RETRIES_S, None):
            try:
                self._sub = await self._js.subscribe(
                    subject,
                    stream=alerts_stream(self._names),
                    cb=self._arrived,
                    ordered_consumer=True,
                    deliver_policy=DeliverPolicy.ALL,
                )
                return
            except TimeoutError as exc:
                if pause is None:
                    raise
                log.info("team alerts: the hub did not answer the subscription (%s); asking again", exc)
                await asyncio.sleep(pause)

    async def stop(self) -> None:
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    async def _arrived(self, msg: Msg) -> None:
        try:
            payload = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            log.warning("team alerts: an unreadable message on %s was skipped", msg.subject)
            return
        if isinstance(payload, dict):
            self._on_alert(payload)
