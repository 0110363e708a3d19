"""`stream --hub URL --hub-tenant NAME` (or `stream --tenant NAME` for a saved hub profile): a monitor whose
source is the team hub instead of the tenant. The NATS client is imported only when a hub is read."""

from __future__ import annotations

import argparse
import asyncio

from tenant_events.cli.hub_args import hub_options
from tenant_events.errors import ConfigError
from tenant_events.hub.subjects import check_hub_tenant
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings


async def hub_monitor(args: argparse.Namespace, paths: AppPaths) -> TenantMonitor | None:
    """A monitor reading from the hub when asked to, else None (the tenant itself is followed)."""
    if not args.hub:
        profile = load_settings(paths).hub(args.tenant) if args.tenant else None
        if profile is None:
            return None
        from tenant_events.auth.secret_store import open_secret_store
        from tenant_events.hub.credentials import hub_options as profile_options

        store = (await asyncio.to_thread(open_secret_store)).store
        options, hub_tenant, name = profile_options(profile, store), profile.hub_tenant, profile.name
        event_types = tuple(args.event_type) or tuple(profile.event_types)
    else:
        if args.base_url or args.client_id:
            raise ConfigError("--hub", "reads the tenant from the hub, which holds no tenant credentials",
                              "drop --base-url and --client-id")  # fmt: skip
        if not args.hub_tenant:
            raise ConfigError("--hub-tenant", "is required with --hub", "give the tenant's name on the hub")
        options, hub_tenant, name = hub_options(args), args.hub_tenant, args.name or args.hub_tenant
        event_types = tuple(args.event_type)
        try:
            check_hub_tenant(name)
        except ValueError as exc:
            raise ConfigError("--name", str(exc)) from None
    from tenant_events.hub.viewer_monitor import viewer_monitor

    return viewer_monitor(name, paths, options, hub_tenant, event_types)
