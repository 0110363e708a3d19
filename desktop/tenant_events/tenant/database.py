"""A tenant's database file as the front ends reach it without a running link: read it (an export, the alert
inbox, all tenants at once), triage its alerts, say plainly when a file cannot be read, and keep it up from the
command line (bring an older file's schema up to date, rebuild its search index, bound what SQLite keeps in
memory across all the desktop's connections). The running link never needs the upkeep (the writer upgrades on
open).

The facade hands these out so that `ui/` and `cli/` import no store module; the records they return are plain
values (`tenant_events.values`). Store-only imports: a command that reads a file loads no stream or HTTP client.
"""

from tenant_events.store.alert_triage import AlertTriage
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.all_tenants import AllTenantsReader
from tenant_events.store.health import check_readable, database_errors
from tenant_events.store.memory_limit import limit_sqlite_memory
from tenant_events.store.reader import EventReader
from tenant_events.store.reindex import reindex, upgrade

__all__ = [
    "AlertInbox",
    "AlertTriage",
    "AllTenantsReader",
    "EventReader",
    "check_readable",
    "database_errors",
    "limit_sqlite_memory",
    "reindex",
    "upgrade",
]
