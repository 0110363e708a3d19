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

import contextlib
import time
from dataclasses import dataclass
from typing import Final

import orjson
from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from tenant_events.hub.connection import HubAuth
from tenant_events.hub.kv_watch import KeyWatch
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_buckets import TOKEN, TeamBucket, provision_bucket, user_token
from tenant_events.values.triage import time_in_range

HISTORY: Final = 16
STATES: Final = ("acknowledged", "snoozed", "resolved", "open")
NOTE_MAX: Final = 500


def triage_bucket(names: HubNames) -> str:
    return f"{names.stream}_TRIAGE"


def alert_key(rule_id: str, first_event_id: str) -> str:
    """The team's name of an alert; ValueError when either part cannot be a key token."""
    for part in (rule_id, first_event_id):
        if not TOKEN.match(part):
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


def parse_entry(key: str, value: bytes | None, revision: int) -> TeamTriage | None:
    """An entry of the bucket, or None (a delete, a foreign key, a bad payload)."""
    parts = key.split(".")
    if len(parts) != 3 or not all(TOKEN.match(p) for p in parts) or not value:
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


class TriageBoard(TeamBucket[TeamTriage]):
    """The tenant's triage bucket seen by one hub user: write one's own entries, watch everyone's."""

    what = "a triage entry"

    def __init__(self, kv: KeyValue, user: str) -> None:
        super().__init__(kv, user)
        self.entries: dict[tuple[str, str], TeamTriage] = {}  # (alert, user) → newest

    @classmethod
    async def open(cls, js: JetStreamContext, names: HubNames, auth: HubAuth) -> TriageBoard:
        return cls(await js.key_value(triage_bucket(names)), user_token(auth))

    def _parse(self, key: str, value: bytes | None, revision: int) -> TeamTriage | None:
        return parse_entry(key, value, revision)

    def _keep(self, item: TeamTriage, revision: int) -> bool:
        self.entries[(item.alert, item.by)] = item
        return True

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
        return await self._put(f"{alert}.{self.user}", payload)

    def current(self, alert: str) -> TeamTriage | None:
        """The newest entry of `alert` over every user (the last write wins)."""
        mine = [e for (a, _u), e in self.entries.items() if a == alert]
        return max(mine, key=lambda e: e.revision) if mine else None

    async def history(self, alert: str) -> list[TeamTriage]:
        """Every kept entry of `alert` by anyone, oldest first (the bucket keeps HISTORY per user), read to where
        the bucket's entries truly end (hub/kv_watch.py): nats-py's own history may end before the first entry
        comes on a loaded machine, and a person's whole history would be missing."""
        parts = alert.split(".")
        if len(parts) != 2 or not all(TOKEN.match(p) for p in parts):
            return []
        out: list[TeamTriage] = []
        watch = await KeyWatch.open(self._kv, f"{alert}.*", history=True)
        try:
            async for entry in watch:
                if entry is None:  # the end of what is kept
                    break
                parsed = parse_entry(entry.key, entry.value, int(entry.revision or 0))
                if parsed is not None:
                    out.append(parsed)
        finally:
            with contextlib.suppress(Exception):
                await watch.stop()
        return sorted(out, key=lambda e: e.revision)
