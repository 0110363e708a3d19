"""The data types the front ends see of a tenant, handed out by the facade so `ui/` and `cli/` import no store
or stream module: the readers of stored rows and alerts."""

from tenant_events.store import AlertInbox, EventReader
from tenant_events.store.all_tenants import AllTenantsReader

__all__ = [
    "AlertInbox",
    "AllTenantsReader",
    "EventReader",
]
