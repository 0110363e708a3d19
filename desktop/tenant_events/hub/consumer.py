"""One viewer's read of the hub: an ephemeral pull consumer from its stored position, and pull requests on it.

The consumer starts at the stream sequence after the last one the viewer stored (everything, for a new viewer),
filtered to the chosen event types, with no acknowledgements: the viewer's position lives in its own database,
in the same transaction as the events (store/writer.py), so a crash never skips nor repeats one. Consumer
sequences must arrive as 1, 2, 3, …; anything else ends the read, and the next one starts again from the stored
position. The server sends an idle heartbeat while a pull request waits, so a dead connection is noticed even
when the tenant is quiet.
"""

from __future__ import annotations

import json
from typing import Final, NamedTuple

from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from tenant_events.hub.subjects import HubNames

INACTIVE_THRESHOLD: Final = 30.0  # seconds: the server removes a consumer its viewer left without deleting it


def consumer_config(names: HubNames, event_types: tuple[str, ...], after: int) -> ConsumerConfig:
    """An ephemeral consumer delivering every message after stream sequence `after` (0 = from the start)."""
    subjects = names.filter_subjects(event_types)
    return ConsumerConfig(
        description="tenant-events viewer",
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE if after else DeliverPolicy.ALL,
        opt_start_seq=after + 1 if after else None,
        ack_policy=AckPolicy.NONE,
        filter_subject=subjects[0] if len(subjects) == 1 else None,
        filter_subjects=subjects if len(subjects) > 1 else None,
        inactive_threshold=INACTIVE_THRESHOLD,
        mem_storage=True,
        num_replicas=1,
    )


def pull_request(batch: int, expires: float, heartbeat: float) -> bytes:
    """`$JS.API.CONSUMER.MSG.NEXT` body: up to `batch` messages, waiting up to `expires` s, heartbeats inside."""
    return json.dumps(
        {"batch": batch, "expires": int(expires * 1e9), "idle_heartbeat": int(heartbeat * 1e9)}
    ).encode()


def next_subject(names: HubNames, consumer: str) -> str:
    return f"$JS.API.CONSUMER.MSG.NEXT.{names.stream}.{consumer}"


class Delivery(NamedTuple):
    """Where a delivered message comes from (stream, consumer) and sits: its stream and consumer sequences,
    how many wait behind it, and when the hub stored it (Unix ns). A NamedTuple: one is made per message (a
    frozen dataclass costs more)."""

    stream_seq: int
    consumer_seq: int
    pending: int
    stream: str = ""
    consumer: str = ""
    stored_ns: int = 0


def delivery(reply: str) -> Delivery | None:
    """Parse a message's `$JS.ACK…` reply subject (both the 9-token form and the 12-token form with domain and
    account hash); None when it is not one."""
    tokens = reply.split(".")
    if len(tokens) not in (9, 12) or tokens[0] != "$JS" or tokens[1] != "ACK":
        return None
    at = (
        5 if len(tokens) == 9 else 7
    )  # …<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>
    try:
        return Delivery(
            int(tokens[at]),
            int(tokens[at + 1]),
            int(tokens[at + 3]),
            tokens[at - 3],
            tokens[at - 2],
            int(tokens[at + 2]),
        )
    except (ValueError, IndexError):
        return None


class Status:
    """Status codes a pull request answers with (ADR-13 in nats-architecture-and-design)."""

    HEARTBEAT: Final = "100"
    NO_MESSAGES: Final = "404"
    REQUEST_TIMEOUT: Final = "408"  # the request expired: ask again
    CONFLICT: Final = "409"  # consumer deleted, leadership change, …: start a new read
