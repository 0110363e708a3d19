"""The data types the front ends see of a tenant, handed out by the facade so `ui/` and `cli/` import no store
or stream module: stored rows and filters, stream states and the readers that return them."""

from tenant_events.monitor import Retention
from tenant_events.store import AlertInbox, EventReader
from tenant_events.store.all_tenants import AllTenantsReader
from tenant_events.stream.request import format_from_timestamp
from tenant_events.stream.states import EngineStats, StateChange, StreamState, state_line

__all__ = [
    "AlertInbox",
    "AllTenantsReader",
    "EngineStats",
    "EventReader",
    "Retention",
    "StateChange",
    "StreamState",
    "format_from_timestamp",
    "state_line",
]
