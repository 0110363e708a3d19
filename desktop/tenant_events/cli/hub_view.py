"""`stream --hub URL --hub-tenant NAME` (or `stream --tenant NAME` for a saved hub profile): a tenant link whose
source is the team hub instead of the tenant. The NATS client is imported only when a hub is read."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace

from tenant_events.cli.hub_args import hub_options, team_archive
from tenant_events.errors import ConfigError
from tenant_events.hub.subjects import check_hub_tenant
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.tenant.sources import HubFrom, of_hub_profile


async def hub_source(args: argparse.Namespace, paths: AppPaths) -> tuple[str, HubFrom] | None:
    """The database name and hub to read from when asked to, else None (the tenant itself is followed)."""
    if not args.hub:
        profile = load_settings(paths).hub(args.tenant) if args.tenant else None
        if profile is None:
            if args.team_archive or args.team_archive_path:
                raise ConfigError(
                    "--team-archive" if args.team_archive else "--team-archive-path",
                    "is read through a team hub",
                    "add --hub and --hub-tenant, or drop it",
                )
            return None
        from tenant_events.tenant.sign_in import open_secret_store

        store = (await asyncio.to_thread(open_secret_store)).store
        source = of_hub_profile(profile, store, paths.data_dir)
        if args.event_type:
            source = replace(source, event_types=tuple(args.event_type))
        if args.team_archive or args.team_archive_path or args.team_archive_endpoint:
            lake = team_archive(args, profile.team_lake)
            source = replace(source, team_archive=lake)
        return profile.name, source
    if args.base_url or args.client_id:
        raise ConfigError(
            "--hub",
            "reads the tenant from the hub, which holds no tenant credentials",
            "drop --base-url and --client-id",
        )
    if not args.hub_tenant:
        raise ConfigError("--hub-tenant", "is required with --hub", "give the tenant's name on the hub")
    name = args.name or args.hub_tenant
    try:
        check_hub_tenant(name)
    except ValueError as exc:
        raise ConfigError("--name", str(exc)) from None
    return name, HubFrom(
        hub_options(args), args.hub_tenant, tuple(args.event_type), team_archive=team_archive(args)
    )
