"""Upkeep of a tenant's database file from the command line: bring an older file's schema up to date, rebuild
its search index. The running link never needs these (the writer upgrades on open). And the desktop's one bound
on what SQLite keeps in memory across all its tenants' connections."""

from tenant_events.store.memory_limit import limit_sqlite_memory
from tenant_events.store.reindex import reindex, upgrade

__all__ = ["limit_sqlite_memory", "reindex", "upgrade"]
