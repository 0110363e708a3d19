"""A `TenantMonitor` whose source is the hub: what the app starts for a tenant added from a team hub, and what
`stream --hub` runs. Everything after the source (store, tables, alerts, notifications) is the tenant's."""

from __future__ import annotations

from tenant_events.auth.secret_store import SecretStore
from tenant_events.hub.connection import HubOptions
from tenant_events.hub.credentials import hub_options
from tenant_events.hub.subjects import HubNames
from tenant_events.hub.viewer import HubViewer, ViewerConfig
from tenant_events.monitor import TenantMonitor
from tenant_events.paths import AppPaths
from tenant_events.settings.hubs import HubProfile
from tenant_events.stream.engine import EngineConfig
from tenant_events.values.retention import Retention
from tenant_events.values.team_archive import Lake


def viewer_monitor(
    name: str,
    paths: AppPaths,
    options: HubOptions,
    hub_tenant: str,
    event_types: tuple[str, ...] = (),
    *,
    retention: Retention | None = None,
    hub_time: bool = False,
    team_archive: Lake | None = None,
) -> TenantMonitor:
    """Follow `hub_tenant` on the hub into the database `name` (`hub_time`: events received when the hub
    stored them), read together with the team's archive when there is one (store/team_view.py)."""
    config = ViewerConfig(options, HubNames(hub_tenant), event_types, name=name, hub_time=hub_time)
    shown = EngineConfig(base_url=options.shown, event_types=event_types, name=name)  # what the UI displays
    return TenantMonitor(
        name,
        paths,
        shown,
        None,
        retention=retention,
        source=lambda writer: HubViewer(config, writer),
        team_archive=team_archive,
        reads_team=True,
    )


def profile_monitor(
    profile: HubProfile, paths: AppPaths, store: SecretStore, *, retention: Retention | None = None
) -> TenantMonitor:
    """The monitor of a saved hub profile, its secret read from `store` (SignInRequired when it is missing)."""
    options = hub_options(profile, store, paths.data_dir)
    return viewer_monitor(
        profile.name, paths, options, profile.hub_tenant, tuple(profile.event_types), retention=retention
    )
