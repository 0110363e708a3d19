"""Upkeep of a tenant's database file from the command line: bring an older file's schema up to date, rebuild
its search index, say plainly when a file cannot be read, and bound what SQLite keeps in memory across all the
desktop's connections. The running link never needs the first two (the writer upgrades on open)."""

from tenant_events.store.health import check_readable, database_errors
from tenant_events.store.memory_limit import limit_sqlite_memory
from tenant_events.store.reindex import reindex, upgrade

__all__ = ["check_readable", "database_errors", "limit_sqlite_memory", "reindex", "upgrade"]
