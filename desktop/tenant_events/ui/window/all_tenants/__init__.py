"""The "All tenants" view: one table over every tenant's store, by event time."""
