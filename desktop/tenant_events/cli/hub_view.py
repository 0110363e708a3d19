"""`stream --hub URL --hub-tenant NAME` (or `stream --tenant NAME` for a saved hub profile): a monitor whose
source is the team hub instead of the tenant. The NATS client is imported only when a hub is read."""

from __future__ import annotations

import argparse
import asyncio

from tenant_events.cli.hub_args import hub_options
from tenant_events.errors import ConfigError
from tenant_events.hub.subjects import HubNames, check_hub_tenant
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.stream.engine import EngineConfig


async def hub_monitor(args: argparse.Namespace, paths: AppPaths) -> TenantMonitor | None:
    """A monitor reading from the hub when asked to, else None (the tenant itself is followed)."""
    if args.hub:
        if args.base_url or args.client_id:
            raise ConfigError("--hub", "reads the tenant from the hub, which holds no tenant credentials",
                              "drop --base-url and --client-id")  # fmt: skip
        options = hub_options(args)
        hub_tenant = args.hub_tenant
        if not hub_tenant:
            raise ConfigError("--hub-tenant", "is required with --hub", "give the tenant's name on the hub")
        name = args.name or hub_tenant
        event_types = tuple(args.event_type)
    else:
        profile = load_settings(paths).hub(args.tenant) if args.tenant else None
        if profile is None:
            return None
        from tenant_events.auth.secret_store import open_secret_store
        from tenant_events.hub.credentials import hub_options as profile_options

        store = (await asyncio.to_thread(open_secret_store)).store
        options = profile_options(profile, store)
        hub_tenant, name = profile.hub_tenant, profile.name
        event_types = tuple(args.event_type) or tuple(profile.event_types)
    from tenant_events.hub.viewer import HubViewer, ViewerConfig

    try:
        check_hub_tenant(name)
    except ValueError as exc:
        raise ConfigError("--name", str(exc)) from None
    config = ViewerConfig(options, HubNames(hub_tenant), event_types, name=name)
    shown = EngineConfig(base_url=options.shown, event_types=event_types, name=name)
    return TenantMonitor(name, paths, shown, None, source=lambda writer: HubViewer(config, writer))
