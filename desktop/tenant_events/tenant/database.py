"""Upkeep of a tenant's database file from the command line: bring an older file's schema up to date, rebuild
its search index. The running link never needs these (the writer upgrades on open)."""

from tenant_events.store.reindex import reindex, upgrade

__all__ = ["reindex", "upgrade"]
