"""What a viewer takes from its inbox: only its own read of its own tenant, in order, from that tenant.

Anything can arrive on an inbox: a hub whose permissions let other clients see it (packaging/nats/accounts.conf
does not), JetStream delivering a consumer someone pointed at it, a pull request someone sent with it as the
reply. So each message must show, in its `$JS.ACK…` reply subject, the viewer's own stream and consumer and the
next consumer sequence; its subject must be one of the tenant's the viewer reads; its stream sequence must follow
the stored position — exactly the next one when the viewer reads every subject (a jump is kept as a gap marker,
never skipped silently), any later one when it reads some event types (the others sit between; messages removed
on the hub are then found before the read, hub/viewer.py `_mark_removed`). A message that
fails is dropped without touching the stored position. An event must also come from the tenant the database
holds: its `xtenant`, and the `<tenant>.<domain>` of its `source`, match the newest event stored (or the first
one taken, for a new database); otherwise it is kept as a rejected row, never as the tenant's event.
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from tenant_events.hub.consumer import Delivery, delivery
from tenant_events.hub.subjects import GAP, REJECTED, HubNames
from tenant_events.wire import Envelope


class Verdict(Enum):
    TAKE = "take"
    DROP = "drop"  # not this viewer's delivery: ignore it, the position stays
    MISSING = "missing"  # a delivery of this read went missing: read again from the stored position


class Decision(NamedTuple):
    verdict: Verdict
    why: str = ""
    where: Delivery | None = None
    skipped: tuple[int, int] | None = None  # stream sequences the hub skipped before this one (a gap marker)


class ReadCheck:
    """One read (one consumer): checks each message against the consumer, the tenant and the position."""

    def __init__(self, names: HubNames, event_types: tuple[str, ...], consumer: str, position: int) -> None:
        self._consumer, self.position = consumer, position
        self._stream, self._base = names.stream, names.all_subjects[:-1]  # per message: computed once here
        self._types = frozenset(event_types)
        self.expected = 1  # the next consumer sequence

    def judge(self, subject: str, reply: str | None) -> Decision:
        where = delivery(reply or "")
        if where is None:
            return Decision(Verdict.DROP, "it is not a JetStream delivery")
        if where.stream != self._stream or where.consumer != self._consumer:
            return Decision(
                Verdict.DROP,
                f"it comes from {where.stream[:80]}/{where.consumer[:80]}, not this viewer's read",
            )
        if where.consumer_seq < self.expected:
            return Decision(Verdict.DROP, f"its consumer sequence {where.consumer_seq} was delivered already")
        kind = subject[len(self._base) :] if subject.startswith(self._base) else ""
        if not kind or (self._types and kind not in self._types and kind not in (REJECTED, GAP)):
            return Decision(Verdict.DROP, f"its subject {subject[:120]!r} is not one this viewer reads")
        if where.stream_seq <= self.position:
            return Decision(
                Verdict.DROP,
                f"its stream sequence {where.stream_seq} is not after the stored position {self.position}",
            )
        if where.consumer_seq > self.expected:
            return Decision(Verdict.MISSING, where=where)
        skipped = None
        if not self._types and where.stream_seq > self.position + 1:
            skipped = (self.position + 1, where.stream_seq - 1)
        self.expected += 1
        self.position = where.stream_seq
        return Decision(Verdict.TAKE, where=where, skipped=skipped)


def source_home(source: str) -> str:
    """The `<tenant>.<domain>` of `urn:<service>:<tenant>.<domain>` ('' for a bare `urn:<service>:`)."""
    parts = source.split(":", 2)
    return parts[2] if len(parts) == 3 else ""


class Origin:
    """The tenant a viewer's database holds: pinned by the newest event stored, or the first one taken."""

    def __init__(self, tenant: str | None = None, source: str | None = None) -> None:
        self.tenant = tenant
        self.home = source_home(source) if source else ""

    def foreign(self, event: Envelope) -> str | None:
        """Why `event` is not the pinned tenant's (None when it is; the first event pins the tenant)."""
        if self.tenant is None:
            self.tenant = event.xtenant
        if event.xtenant != self.tenant:
            return f"xtenant {event.xtenant!r} is not this database's tenant {self.tenant!r}"
        home = source_home(event.source)
        if home and not self.home:
            self.home = home
        elif home and home != self.home:
            return f"source {event.source[:200]!r} is not this database's tenant ({self.home[:200]})"
        return None
