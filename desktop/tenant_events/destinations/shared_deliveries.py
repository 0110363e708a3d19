"""The seam between the delivery worker and a team's shared delivery state (tenant/team_alerts.py implements it
on the hub): the worker asks before each send and records after, without importing the hub."""

from __future__ import annotations

from typing import Protocol

from tenant_events.destinations.message import AlertMessage
from tenant_events.store.outbox import Delivery
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage


class SharedDeliveries(Protocol):
    """A team's delivery state kept beside the database (the relays' shared outbox on the hub): a delivery
    another relay made is not sent again, and every relay sends an alert version under the same dedup key."""

    def may_send(self) -> bool:
        """False once this process may no longer deliver (it lost the lease): deliveries stay pending."""

    def message(
        self, alert: StoredAlert, delivery: Delivery, resolution: Triage | None = None
    ) -> AlertMessage: ...

    def folded(self, sent: list[tuple[StoredAlert, Delivery]]) -> AlertMessage:
        """One message for a flood (flood.py), under the team's keys."""
        ...

    async def prior(self, alert: StoredAlert, delivery: Delivery) -> tuple[bool, int]:
        """(delivered already, attempts so far) as any relay recorded them: a takeover goes on counting."""
        ...

    async def record(
        self, alert: StoredAlert, delivery: Delivery, state: str, attempts: int, error: str = ""
    ) -> None: ...
