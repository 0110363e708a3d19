"""A team's shared triage on the hub: one JetStream key-value bucket per tenant, one key per alert and person.

    bucket  TENANT_EVENTS_<TENANT>_TRIAGE      (the collector creates it with the stream; history 16 per key)
    key     <rule id>.<first event id>.<user>  value {"state", "note", "until", "at"}

Who wrote an entry is the last token of its key, never a field of the payload: packaging/nats/accounts.conf lets
each hub user publish only keys ending in its own name (`$KV.TENANT_EVENTS_ACME_TRIAGE.*.*.<user>`), so the server,
not the client, vouches for it. Viewers that evaluate the same events raise the same alert, so an alert is named
by its rule and its first event, not by a database id. The current state of an alert is the newest entry over
all its users' keys (the last write wins); the older ones are its history. Payloads are checked like any input
from the network: a bad one is skipped and logged, never shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import nats.js.errors
import orjson
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from tenant_events.hub.connection import HubAuth, inbox_prefix
from tenant_events.hub.subjects import HubNames
from tenant_events.values.triage import time_in_range

log = logging.getLogger(__name__)
HISTORY: Final = 16
STATES: Final = ("acknowledged", "snoozed", "resolved", "open")
NOTE_MAX: Final = 500
_TOKEN: Final = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_NAME_IN_USE: Final = 10058


def triage_bucket(names: HubNames) -> str:
    return f"{names.stream}_TRIAGE"


def user_token(auth: HubAuth) -> str:
    """The hub user's name as a key token (the same as its inbox prefix's); ValueError without a user."""
    prefix = inbox_prefix(auth)
    if not prefix.startswith("_INBOX_"):
        raise ValueError("team triage needs a hub user of one's own (a user name, an NKey or a creds file)")
    return prefix[len("_INBOX_") :]


def alert_key(rule_id: str, first_event_id: str) -> str:
    """The team's name of an alert; ValueError when either part cannot be a key token."""
    for part in (rule_id, first_event_id):
        if not _TOKEN.match(part):
            raise ValueError(f"{part[:40]!r} cannot name an alert on the hub")
    return f"{rule_id}.{first_event_id}"


@dataclass(frozen=True, slots=True)
class TeamTriage:
    """One person's triage of one alert, as the hub holds it; `by` is the key's user."""

    alert: str
    by: str
    state: str
    at: float
    until: float | None
    note: str
    revision: int


async def provision_triage(js: JetStreamContext, names: HubNames, replicas: int = 1) -> KeyValue:
    """The tenant's triage bucket, created when missing (a collector's right)."""
    description = f"Tenant Events: the team's triage of tenant {names.tenant}'s alerts"
    return await provision_bucket(js, triage_bucket(names), HISTORY, replicas, description)


async def provision_bucket(
    js: JetStreamContext, bucket: str, history: int, replicas: int, description: str
) -> KeyValue:
    """A team bucket the viewers write their own keys of, created when missing (also by another collector at
    the same moment)."""
    with contextlib.suppress(nats.js.errors.BucketNotFoundError):
        return await js.key_value(bucket)
    config = KeyValueConfig(
        bucket=bucket, history=history, replicas=replicas, storage=StorageType.FILE, description=description
    )
    try:
        return await js.create_key_value(config)
    except nats.js.errors.APIError as exc:
        if exc.err_code != _NAME_IN_USE:
            raise
        return await js.key_value(bucket)


def parse_entry(key: str, value: bytes | None, revision: int) -> TeamTriage | None:
    """An entry of the bucket, or None (a delete, a foreign key, a bad payload)."""
    parts = key.split(".")
    if len(parts) != 3 or not all(_TOKEN.match(p) for p in parts) or not value:
        return None
    try:
        data = orjson.loads(value)
        state, note, at, until = data["state"], data.get("note", ""), float(data["at"]), data.get("until")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    if state not in STATES or not isinstance(note, str) or len(note) > NOTE_MAX:
        return None
    if until is not None and not isinstance(until, int | float):
        return None
    if not time_in_range(at) or (until is not None and not time_in_range(until)):  # (NaN is in no range)
        return None
    return TeamTriage(
        f"{parts[0]}.{parts[1]}",
        parts[2],
        state,
        at,
        float(until) if until is not None else None,
        note,
        revision,
    )


class TriageBoard:
    """The tenant's triage bucket seen by one hub user: write one's own entries, watch everyone's."""

    def __init__(self, kv: KeyValue, user: str) -> None:
        self._kv = kv
        self.user = user
        self.entries: dict[tuple[str, str], TeamTriage] = {}  # (alert, user) → newest
        self.on_change: list[Callable[[TeamTriage], None]] = []
        self._watcher: Any = None
        self._task: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, js: JetStreamContext, names: HubNames, auth: HubAuth) -> TriageBoard:
        return cls(await js.key_value(triage_bucket(names)), user_token(auth))

    async def put(
        self, alert: str, state: str, note: str = "", until: float | None = None, at: float | None = None
    ) -> int:
        """Record this user's triage of `alert` (`at`: when it was made, default now); returns the revision.
        ValueError for a bad value."""
        if state not in STATES:
            raise ValueError(f"{state!r} is not a triage state")
        if len(note) > NOTE_MAX:
            raise ValueError(f"the note is {len(note)} characters; at most {NOTE_MAX}")
        payload = orjson.dumps(
            {"state": state, "note": note, "until": until, "at": time.time() if at is None else at}
        )
        try:
            return int(await self._kv.put(f"{alert}.{self.user}", payload))
        except nats.js.errors.APIError as exc:  # e.g. the bucket is full: it keeps what it has
            raise ValueError(f"the hub refused it ({exc.description or exc.__class__.__name__})") from None

    def current(self, alert: str) -> TeamTriage | None:
        """The newest entry of `alert` over every user (the last write wins)."""
        mine = [e for (a, _u), e in self.entries.items() if a == alert]
        return max(mine, key=lambda e: e.revision) if mine else None

    async def history(self, alert: str) -> list[TeamTriage]:
        """Every kept entry of `alert`, oldest first (the bucket keeps HISTORY per user)."""
        out: list[TeamTriage] = []
        for a, user in [k for k in self.entries if k[0] == alert]:
            with contextlib.suppress(nats.js.errors.NoKeysError, nats.js.errors.KeyNotFoundError):
                for entry in await self._kv.history(f"{a}.{user}"):
                    parsed = parse_entry(entry.key, entry.value, int(entry.revision or 0))
                    if parsed is not None:
                        out.append(parsed)
        return sorted(out, key=lambda e: e.revision)

    async def start(self) -> None:
        """Watch every entry (the existing ones first); `on_change` observers hear each as it arrives."""
        self._watcher = await self._kv.watchall()
        self._task = asyncio.create_task(self._run(), name="triage-watch")

    async def _run(self) -> None:
        async for entry in self._watcher:
            if entry is None:  # the end of the existing entries
                continue
            parsed = parse_entry(entry.key, entry.value, int(entry.revision or 0))
            if parsed is None:
                if entry.value:
                    log.warning("a triage entry on the hub was not understood and is ignored")
                continue
            self.entries[(parsed.alert, parsed.by)] = parsed
            for callback in list(self.on_change):
                try:
                    callback(parsed)
                except Exception:
                    log.exception("a triage observer failed")

    async def stop(self) -> None:
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
