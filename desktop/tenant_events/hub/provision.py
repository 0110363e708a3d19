"""Creating what a tenant needs on the hub, when missing: the event stream, its buckets, the team's alerts.

Only a collector does this (viewers hold read-only permissions, packaging/nats/accounts.conf). An existing
stream is kept as it is — its retention and replicas are an operator's decision once made — and reported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final

import nats.js.errors
from nats.js import JetStreamContext
from nats.js.api import DiscardPolicy, KeyValueConfig, RetentionPolicy, StorageType, StreamConfig, StreamInfo
from nats.js.kv import KeyValue

from tenant_events.hub.subjects import HubNames
from tenant_events.hub.team_alerts import outbox_config, provision_alerts_stream
from tenant_events.hub.triage import provision_triage

log = logging.getLogger(__name__)

NOT_CLUSTERED: Final = 10074  # JetStream: "replicas > 1 not supported in non-clustered mode"
NAME_IN_USE: Final = 10058  # JetStream: "stream name already in use with a different configuration"


@dataclass(frozen=True)
class StreamPlan:
    """Retention and replicas for a tenant's stream; replicas None = 3 on a cluster, 1 on a single server."""

    retention_days: float = 30.0
    replicas: int | None = None
    duplicate_window: float = 600.0  # seconds: a collector's replay after a crash within this is kept once
    lease_ttl: float = 5.0


@dataclass(frozen=True)
class Provisioned:
    stream: StreamInfo
    cursor: KeyValue
    lease: KeyValue
    created: bool

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
    max_age = info.config.max_age or None
    await provision_alerts_stream(js, names, replicas, max_age)  # the team's alerts (hub/team_alerts.py)
    await _bucket(js, outbox_config(names, replicas, max_age))  # and what the relays delivered of them
    return Provisioned(info, cursor, lease, created)


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
