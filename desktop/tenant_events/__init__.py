"""Tenant Events: follow an identity tenant's event stream from the tray or the terminal."""

__version__ = "0.1.0"
APP_NAME = "Tenant Events"
APP_ID = "io.github.tenantevents.TenantEvents"
