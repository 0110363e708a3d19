"""Windows other than the main one: welcome, connect a tenant, settings."""
