"""Creating what a tenant needs on the hub, when missing: the event stream, its buckets, the team's alerts.

Only a collector does this (viewers hold read-only permissions, packaging/nats/accounts.conf). An existing
stream keeps its retention and replicas — an operator's decision once made — and is reported.

Every stream is also guarded, new or old (`guard`, a stream update when it differs): no bucket and no alert
stream takes a rollup (one message with `Nats-Rollup: all` under a viewer's own triage key would otherwise
delete every entry of the bucket, the other people's triage and its history), no bucket can be purged, each
bucket and the alert stream hold at most `StreamPlan`'s bytes and values of a bounded size, and no consumer
may idle longer than CONSUMER_IDLE_MAX (a viewer may make only ephemeral consumers; this bounds how long one
it walks away from lives). A limit an operator set on an existing stream is kept; an unlimited one is bounded.
A collector without the right to update streams (an accounts.conf from before) keeps running and is told.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, Final

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import (
    DiscardPolicy,
    KeyValueConfig,
    RetentionPolicy,
    StorageType,
    StreamConfig,
    StreamConsumerLimits,
    StreamInfo,
)
from nats.js.kv import KeyValue

from tenant_events.hub.silences import provision_silences, silences_bucket
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import (
    ALERT_MAX,
    alerts_stream,
    outbox_bucket,
    outbox_config,
    provision_alerts_stream,
)
from tenant_events.hub.triage import provision_triage, triage_bucket

log = logging.getLogger(__name__)

NOT_CLUSTERED: Final = 10074  # JetStream: "replicas > 1 not supported in non-clustered mode"
NAME_IN_USE: Final = 10058  # JetStream: "stream name already in use with a different configuration"
MIB: Final = 1024 * 1024
CONSUMER_IDLE_MAX: Final = 600.0  # s: above the longest any client asks for (nats-py's key watch: 300 s)
VALUE_MAX: Final = 4096  # bytes of one triage entry, delivery record or lease (a note is 500 characters)
CURSOR_MAX: Final = 64 * 1024  # the tenant's SSE cursor is opaque: room for a long one


@dataclass(frozen=True)
class StreamPlan:
    """Retention and replicas for a tenant's stream; replicas None = 3 on a cluster, 1 on a single server."""

    retention_days: float = 30.0
    replicas: int | None = None
    duplicate_window: float = 600.0  # seconds: a collector's replay after a crash within this is kept once
    lease_ttl: float = 5.0
    triage_bytes: int = 256 * MIB  # the team's triage: about a million entries (discard new: never evicted)
    silences_bytes: int = 16 * MIB  # the team's silences: tens of thousands with their history
    outbox_bytes: int = 64 * MIB  # the relays' delivery record
    alerts_bytes: int = 1024 * MIB  # the team's alerts as they are now, and the delivery receipts


@dataclass(frozen=True)
class Guard:
    """What `guard` makes a stream hold to: no rollups (and no purges: `sealed_purge`), limits when set."""

    max_bytes: int | None = None
    max_value: int | None = None
    sealed_purge: bool = True


@dataclass(frozen=True)
class Provisioned:
    stream: StreamInfo
    cursor: KeyValue
    lease: KeyValue
    created: bool
    unguarded: tuple[str, ...] = ()  # streams this collector could not guard (it may not update streams)

    @property
    def summary(self) -> str:
        config = self.stream.config
        days = (config.max_age or 0) / 86400
        kept = f"{days:g} days" if days else "until deleted"
        verb = "created" if self.created else "found"
        return (
            f"{verb} the hub stream {config.name}: {config.num_replicas} replica(s), events kept {kept}, "
            f"a replay within {config.duplicate_window:g} s is kept once"
        )

    @property
    def warning(self) -> str | None:
        """What an operator must do when some streams are not guarded; None when all are."""
        if not self.unguarded:
            return None
        return (
            f"the hub streams {', '.join(self.unguarded)} still let a viewer roll them up (wipe them) or fill "
            "them: give collectors $JS.API.STREAM.UPDATE.* (packaging/nats/accounts.conf) and start the relay "
            "again"
        )


async def provision(js: JetStreamContext, names: HubNames, plan: StreamPlan) -> Provisioned:
    """The stream and buckets of `names`, created when missing."""
    created = False
    try:
        info = await js.stream_info(names.stream)
    except nats.js.errors.NotFoundError:
        try:
            info = await _create_stream(js, names, plan)
            created = True
        except nats.js.errors.APIError as exc:
            if exc.err_code != NAME_IN_USE:
                raise
            info = await js.stream_info(names.stream)  # another collector made it just now
    replicas = info.config.num_replicas or 1
    cursor = await _bucket(
        js,
        KeyValueConfig(
            bucket=names.cursor_bucket,
            history=1,
            replicas=replicas,
            storage=StorageType.FILE,
            description="Tenant Events: the collector's SSE cursor",
        ),
    )
    lease = await _bucket(
        js,
        KeyValueConfig(
            bucket=names.lease_bucket,
            history=1,
            replicas=replicas,
            ttl=plan.lease_ttl,
            storage=StorageType.FILE,
            description="Tenant Events: which collector streams",
        ),
    )
    await provision_triage(js, names, replicas)  # the team's triage (hub/triage.py): viewers cannot create it
    await provision_silences(js, names, replicas)  # and its silences (hub/silences.py)
    max_age = info.config.max_age or None
    await provision_alerts_stream(js, names, replicas, max_age)  # the team's alerts (hub/team_alerts.py)
    await _bucket(js, outbox_config(names, replicas, max_age))  # and what the relays delivered of them
    guards = {
        names.stream: Guard(sealed_purge=False),  # written by collectors only; an operator may purge events
        f"KV_{names.cursor_bucket}": Guard(MIB, CURSOR_MAX),
        f"KV_{names.lease_bucket}": Guard(MIB, VALUE_MAX),
        f"KV_{triage_bucket(names)}": Guard(plan.triage_bytes, VALUE_MAX),
        f"KV_{silences_bucket(names)}": Guard(plan.silences_bytes, VALUE_MAX),
        alerts_stream(names): Guard(plan.alerts_bytes, ALERT_MAX, sealed_purge=False),
        f"KV_{outbox_bucket(names)}": Guard(plan.outbox_bytes, VALUE_MAX),
    }
    unguarded: list[str] = []
    for stream, wanted in guards.items():
        # (after the first refusal the rest are not tried: each would wait for its own timeout)
        if unguarded or not await guard(js, stream, wanted):
            unguarded.append(stream)
    return Provisioned(info, cursor, lease, created, tuple(unguarded))


async def guard(js: JetStreamContext, stream: str, wanted: Guard) -> bool:
    """Make `stream` hold to `wanted` (a stream update when it does not yet); False when the hub refused the
    update (the collector may not update streams)."""
    config = (await js.stream_info(stream)).config
    changes: dict[str, Any] = {}
    if config.allow_rollup_hdrs:
        changes["allow_rollup_hdrs"] = False
    if wanted.sealed_purge and not config.deny_purge:
        changes["deny_purge"] = True
    if wanted.max_bytes is not None and (config.max_bytes or -1) <= 0:
        changes["max_bytes"] = wanted.max_bytes
    if wanted.max_value is not None and (config.max_msg_size or -1) <= 0:
        changes["max_msg_size"] = wanted.max_value
    limits = config.consumer_limits
    if limits is None or not limits.inactive_threshold:
        changes["consumer_limits"] = StreamConsumerLimits(
            inactive_threshold=CONSUMER_IDLE_MAX,
            max_ack_pending=limits.max_ack_pending if limits is not None else None,
        )
    if not changes:
        return True
    try:
        await js.update_stream(dataclasses.replace(config, **changes))
    except TimeoutError:  # a refused request is never answered: the refusal arrives on the side
        log.warning("the hub did not let this collector guard the stream %s", stream)
        return False
    log.info("guarded the hub stream %s: %s", stream, ", ".join(sorted(changes)))
    return True


async def _create_stream(js: JetStreamContext, names: HubNames, plan: StreamPlan) -> StreamInfo:
    config = StreamConfig(
        name=names.stream,
        description=f"Tenant Events: the events of tenant {names.tenant}",
        subjects=[names.all_subjects],
        retention=RetentionPolicy.LIMITS,
        discard=DiscardPolicy.OLD,
        storage=StorageType.FILE,
        max_age=plan.retention_days * 86400 if plan.retention_days else None,
        num_replicas=plan.replicas or 3,
        duplicate_window=plan.duplicate_window,
        allow_direct=True,
    )
    try:
        return await js.add_stream(config)
    except nats.js.errors.APIError as exc:
        if plan.replicas is not None or exc.err_code != NOT_CLUSTERED:
            raise
    log.info("the hub is a single server: the stream %s gets one replica", names.stream)
    config.num_replicas = 1
    return await js.add_stream(config)


async def _bucket(js: JetStreamContext, config: KeyValueConfig) -> KeyValue:
    try:
        return await js.key_value(config.bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(config)
    except nats.js.errors.APIError as exc:
        if exc.err_code != NAME_IN_USE:
            raise
        return await js.key_value(config.bucket)  # another collector made it just now
