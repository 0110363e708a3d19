"""What the team's own buckets have in common — the triage (hub/triage.py) and the silences (hub/silences.py):
each viewer writes only keys ending in its own hub user name (packaging/nats/accounts.conf), every viewer and
the relay watch every key, and a collector creates the bucket when missing.

`TeamBucket` is the one watcher loop over such a bucket: every entry, the existing ones first, parsed by the
bucket's own rules (a bad payload is skipped and logged, never shown), kept by the board and then told to its
`on_change` observers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable
from typing import Final, Generic, TypeVar

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from tenant_events.hub.connection import HubAuth, inbox_prefix
from tenant_events.hub.kv_watch import KeyWatch

log = logging.getLogger(__name__)
T = TypeVar("T")
TOKEN: Final = re.compile(r"^[A-Za-z0-9_-]{1,128}$")  # one token of a key
_NAME_IN_USE: Final = 10058


def user_token(auth: HubAuth) -> str:
    """The hub user's name as a key token (the same as its inbox prefix's); ValueError without a user."""
    prefix = inbox_prefix(auth)
    if not prefix.startswith("_INBOX_"):
        raise ValueError(
            "the team's triage and silences need a hub user of one's own (a user name, an NKey or a creds file)"
        )
    return prefix[len("_INBOX_") :]


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


class TeamBucket(Generic[T]):
    """A team bucket seen by one hub user: its own keys written (`_put`), everyone's watched."""

    what = "an entry"  # said in the log when one is not understood

    def __init__(self, kv: KeyValue, user: str) -> None:
        self._kv = kv
        self.user = user
        self.on_change: list[Callable[[T], None]] = []
        self.loaded = asyncio.Event()  # the entries the bucket held at the start have all been told
        self._watcher: KeyWatch | None = None
        self._task: asyncio.Task[None] | None = None

    def _parse(self, key: str, value: bytes | None, revision: int) -> T | None:
        """The entry as the bucket's record, or None (a delete, a foreign key, a bad payload)."""
        raise NotImplementedError

    def _keep(self, item: T, revision: int) -> bool:
        """Take the entry in; False when it is older than what is kept (observers are not told)."""
        raise NotImplementedError

    async def _put(self, key: str, payload: bytes) -> int:
        """Write under `key` (which ends in this user's name); the revision. ValueError when the hub refuses."""
        try:
            return int(await self._kv.put(key, payload))
        except nats.js.errors.APIError as exc:  # e.g. the bucket is full: it keeps what it has
            raise ValueError(f"the hub refused it ({exc.description or exc.__class__.__name__})") from None

    async def start(self) -> None:
        """Watch every entry (the existing ones first); `on_change` observers hear each as it arrives."""
        self._watcher = watcher = await KeyWatch.open(self._kv)
        self._task = asyncio.create_task(self._run(watcher), name=f"{type(self).__name__}-watch")

    async def _run(self, watcher: KeyWatch) -> None:
        async for entry in watcher:
            if entry is None:  # the end of the existing entries
                self.loaded.set()
                continue
            revision = int(entry.revision or 0)
            parsed = self._parse(entry.key, entry.value, revision)
            if parsed is None:
                if entry.value:
                    log.warning("%s on the hub was not understood and is ignored", self.what)
                continue
            if not self._keep(parsed, revision):
                continue
            for callback in list(self.on_change):
                try:
                    callback(parsed)
                except Exception:
                    log.exception("an observer of %s failed", type(self).__name__)

    async def stop(self) -> None:
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                await self._watcher.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
