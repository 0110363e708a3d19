"""The team's alert evaluation state on the hub, so the relay that takes the lease goes on where the last one
stopped: a firing after a takeover is version n+1 of the alert, not version 1 of an alert raised again.

    bucket  TENANT_EVENTS_<TENANT>_EVAL   (made by the leading relay when missing; history 1, entries expire)
      position          {"event_id", "time_ms"}: the last event the team's rules have evaluated
      alert.<digest>    one team alert as its leader stored it (its versions, triage, the latest firing's
                        evidence) and the events behind it: {"key", "alert": {…}, "events": [[time ms, id], …]}

The leader writes the alerts a step touched, then the position (tenant/team_alerts.py); a takeover reads it all
back (`load`) and its evaluator adopts it before its first step (store/team_state.py): alerts, watermark, and
the events an alert already holds after the position (the leader may have saved an alert and died before its
position), which are never counted twice. The windows and sequences are refilled from the hub's own events
before the position, marked with the alerts that hold them, as after any restart (alerts/evaluator.py).
An alert's key is two tokens (`alert.<digest>`): a viewer may write only three-token keys ending in its own name
(packaging/nats/accounts.conf), so it can reach nothing here. Values are checked like any input from the network.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
from typing import Final

import nats.errors
import nats.js.errors
import orjson
from nats.aio.client import Client as NATS
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue
from pydantic import BaseModel, ConfigDict, ValidationError

from tenant_events.hub.kv_watch import KeyWatch
from tenant_events.hub.subjects import HubNames
from tenant_events.store.team_state import CarriedAlert, TeamState
from tenant_events.values.alerts import StoredAlert

log = logging.getLogger(__name__)
POSITION: Final = "position"
KEEP_S: Final = (
    7 * 86_400.0
)  # an entry not written for this long is gone (a window reaches a day back at most)
_NAME_IN_USE: Final = 10058


def eval_bucket(names: HubNames) -> str:
    return f"{names.stream}_EVAL"


def alert_entry(team_key: str) -> str:
    return "alert." + hashlib.sha256(team_key.encode()).hexdigest()[:24]


class _Entry(BaseModel):
    """An alert entry as the hub carries it: the record checked field by field, as pydantic checks any wire
    object (an unknown severity, a missing field: the entry is refused)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    key: str
    alert: StoredAlert
    events: list[tuple[int, str]]


class _Position(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    event_id: str
    time_ms: int


def entry_value(key: str, item: CarriedAlert) -> bytes:
    alert = dataclasses.replace(item.alert, id=0, first_seq=0, last_seq=0)  # (the leader's own numbers)
    return orjson.dumps({"key": key, "alert": dataclasses.asdict(alert), "events": list(item.events)})


def parse_entry(value: bytes | None) -> CarriedAlert | None:
    """An alert entry, or None (a delete, a payload not understood)."""
    try:
        entry = _Entry.model_validate_json(value or b"")
    except ValidationError:
        return None
    return CarriedAlert(entry.alert, tuple(entry.events))


class EvalState:
    """The team's evaluation state in its bucket; every call answers even when the hub does not (a save that
    fails is logged: the next one carries the alert again, and a takeover re-evaluates a little more)."""

    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    @classmethod
    async def open(cls, nc: NATS, names: HubNames, replicas: int = 1) -> EvalState:
        js = nc.jetstream(timeout=5.0)
        bucket = eval_bucket(names)
        with contextlib.suppress(nats.js.errors.BucketNotFoundError):
            return cls(await js.key_value(bucket))
        config = KeyValueConfig(
            bucket=bucket,
            history=1,
            replicas=replicas,
            ttl=KEEP_S,
            storage=StorageType.FILE,
            description=f"Tenant Events: where the team's alert evaluation of {names.tenant} stands",
        )
        try:
            return cls(await js.create_key_value(config))
        except nats.js.errors.APIError as exc:
            if exc.err_code != _NAME_IN_USE:
                raise
            return cls(await js.key_value(bucket))  # another relay made it just now

    async def load(self) -> TeamState | None:
        """The state a takeover adopts, None when no relay has saved one (or its position is unreadable)."""
        try:
            found = await self._kv.get(POSITION)
        except nats.js.errors.KeyNotFoundError:
            return None
        try:
            position = _Position.model_validate_json(found.value or b"")
        except ValidationError:
            log.warning("team alerts: the evaluation's position on the hub was not understood; starting anew")
            return None
        alerts: list[CarriedAlert] = []
        watcher = await KeyWatch.open(self._kv, "alert.*")
        try:
            async for entry in watcher:
                if entry is None:  # the end of what is there
                    break
                if entry.operation is not None:  # a delete
                    continue
                item = parse_entry(entry.value)
                if item is None:
                    log.warning("team alerts: an alert of the evaluation's state was not understood")
                    continue
                alerts.append(item)
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()
        return TeamState((position.event_id, position.time_ms), tuple(alerts))

    async def save(self, alerts: list[tuple[str, CarriedAlert]], position: tuple[str, int] | None) -> bool:
        """The alerts a step touched (team key, alert), then the position; False when the hub did not take
        them (the caller keeps them for the next save)."""
        try:
            for key, item in alerts:
                await self._kv.put(alert_entry(key), entry_value(key, item))
            if position is not None:
                await self._kv.put(POSITION, orjson.dumps({"event_id": position[0], "time_ms": position[1]}))
        except (TimeoutError, nats.errors.Error) as exc:
            log.info("team alerts: the evaluation's state was not saved on the hub (%s)", exc)
            return False
        return True
