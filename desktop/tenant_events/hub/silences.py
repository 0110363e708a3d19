"""A team's silences on the hub: one JetStream key-value bucket per tenant, one key per silence and person.

    bucket  TENANT_EVENTS_<TENANT>_SILENCES    (the collector creates it with the stream; history 8 per key)
    key     <silence id>.<user>                value {"rule", "severity", "tenant", "group", "starts_at",
                                                      "ends_at", "comment", "created_at"}

The same trust rules as the triage bucket (hub/triage.py, hub/team_buckets.py): packaging/nats/accounts.conf lets each hub user publish
only keys ending in its own name (`$KV.TENANT_EVENTS_ACME_SILENCES.*.<user>`), so who silenced (or lifted) what
is the server's word, never the payload's; no bucket takes a rollup or a purge (hub/provision.py). A silence is
lifted by writing it again with its end now; the newest entry of a silence over every user's key wins. Every
viewer and the relay follow the bucket (tenant/team_silences.py) and honour what it holds.
"""

from __future__ import annotations

from typing import Final

import orjson
from nats.js import JetStreamContext
from nats.js.kv import KeyValue
from pydantic import ValidationError

from tenant_events.hub.connection import HubAuth
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_buckets import TOKEN, TeamBucket, provision_bucket, user_token
from tenant_events.settings.silences_file import SilenceEntry, entry_of
from tenant_events.values.silences import Silence
from tenant_events.values.triage import time_in_range

HISTORY: Final = 8


def silences_bucket(names: HubNames) -> str:
    return f"{names.stream}_SILENCES"


async def provision_silences(js: JetStreamContext, names: HubNames, replicas: int = 1) -> KeyValue:
    """The tenant's silences bucket, created when missing (a collector's right)."""
    description = f"Tenant Events: the team's silences of tenant {names.tenant}'s alerts"
    return await provision_bucket(js, silences_bucket(names), HISTORY, replicas, description)


def parse_silence(key: str, value: bytes | None) -> Silence | None:
    """A silence of the bucket, its author the key's user; None for a delete, a foreign key or a bad payload."""
    parts = key.split(".")
    if len(parts) != 2 or not all(TOKEN.match(p) for p in parts) or not value:
        return None
    try:
        data = orjson.loads(value)
        if not isinstance(data, dict):
            return None
        entry = SilenceEntry.model_validate({**data, "id": parts[0], "author": parts[1]})
    except (orjson.JSONDecodeError, ValidationError):
        return None
    if not all(time_in_range(t) for t in (entry.starts_at, entry.ends_at)):
        return None
    return entry.record()


class SilenceBoard(TeamBucket[Silence]):
    """The tenant's silences bucket seen by one hub user: write one's own, watch everyone's."""

    what = "a silence"

    def __init__(self, kv: KeyValue, user: str) -> None:
        super().__init__(kv, user)
        self.silences: dict[str, tuple[int, Silence]] = {}  # silence id → (revision, newest entry)

    @classmethod
    async def open(cls, js: JetStreamContext, names: HubNames, auth: HubAuth) -> SilenceBoard:
        return cls(await js.key_value(silences_bucket(names)), user_token(auth))

    def _parse(self, key: str, value: bytes | None, revision: int) -> Silence | None:
        return parse_silence(key, value)

    def _keep(self, item: Silence, revision: int) -> bool:
        known = self.silences.get(item.id)
        if known is not None and known[0] > revision:
            return False
        self.silences[item.id] = (revision, item)
        return True

    async def put(self, silence: Silence) -> int:
        """Write a silence (a new one, or one lifted: its end now) under this user's key; the revision."""
        payload = {k: v for k, v in entry_of(silence).items() if k not in ("id", "author")}
        return await self._put(f"{silence.id}.{self.user}", orjson.dumps(payload))

    def all(self) -> list[Silence]:
        return [s for _, s in self.silences.values()]
