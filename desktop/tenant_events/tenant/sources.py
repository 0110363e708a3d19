"""What a tenant link follows, and with which credentials: the profile → engine config mapping lives here.

    StreamFrom(base_url, credentials) ─▶ EngineConfig + a token provider ─▶ StreamEngine (the tenant itself)
    HubFrom(options, hub_tenant)      ─▶ a hub viewer (hub/viewer.py), no tenant credentials at all

Credentials, as the command line and the app find them: an access token from the environment, client
credentials (services), or the stored sign-in of a profile (restored by tenant/sign_in.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from tenant_events.auth.secret_store import SecretStore
from tenant_events.settings import TenantProfile
from tenant_events.settings.hubs import HubProfile
from tenant_events.stream.client_credentials import ClientCredentialsTokenProvider
from tenant_events.stream.engine import EngineConfig
from tenant_events.stream.tokens import StaticTokenProvider, TokenProvider
from tenant_events.values.team_archive import Lake
from tenant_events.wire.from_timestamp import format_from_timestamp

if TYPE_CHECKING:  # the NATS client loads only when a hub is read
    from tenant_events.hub.connection import HubOptions

# The app's first start of a tenant looks back this far (with no cursor the stream starts at the latest events);
# `from_timestamp` is for the initial query only, the stored cursor wins after (docs/event-stream.md "Request").
FIRST_LOOKBACK = timedelta(hours=24)


@dataclass(frozen=True)
class AccessToken:
    """A fixed bearer token (TENANT_EVENTS_ACCESS_TOKEN): a 401 cannot be fixed by refreshing."""

    token: str = field(repr=False)


@dataclass(frozen=True)
class ClientCredentials:
    """OAuth client credentials, for services."""

    auth_url: str
    client_id: str
    client_secret: str = field(repr=False)
    audience: str


@dataclass(frozen=True)
class StoredSignIn:
    """The profile's sign-in, kept in `secrets` (the keyring); restored or made through the browser."""

    profile: TenantProfile
    secrets: SecretStore


Credentials = AccessToken | ClientCredentials | StoredSignIn


@dataclass(frozen=True)
class StreamFrom:
    """Follow the tenant's own event stream; with no `from_timestamp`, `lookback` (if any) sets where a first
    start begins."""

    base_url: str
    credentials: Credentials
    event_types: tuple[str, ...] = ()
    from_timestamp: str | None = None
    lookback: timedelta | None = None
    stall_timeout: float = 90.0

    def engine_config(self, name: str, now: datetime | None = None) -> EngineConfig:
        since = self.from_timestamp
        if since is None and self.lookback is not None:
            since = format_from_timestamp((now or datetime.now(UTC)) - self.lookback)
        return EngineConfig(
            base_url=self.base_url,
            event_types=self.event_types,
            from_timestamp=since,
            name=name,
            stall_timeout=self.stall_timeout,
        )


@dataclass(frozen=True)
class HubFrom:
    """Follow the tenant as a team hub carries it (hub/viewer.py). `hub_time`: an event counts as received when
    the hub stored it, and the rules judge its age (catch-up or live) by that — a team relay's evaluation, which
    any relay repeats alike whenever it reads the stream."""

    options: HubOptions
    hub_tenant: str
    event_types: tuple[str, ...] = ()
    hub_time: bool = False
    team_archive: Lake | None = None  # the team's shared archive, read together with the database


Source = StreamFrom | HubFrom


def of_profile(
    profile: TenantProfile, secrets: SecretStore, lookback: timedelta | None = FIRST_LOOKBACK
) -> StreamFrom:
    """A saved tenant profile, signed in with its stored sign-in."""
    return StreamFrom(
        profile.base_url, StoredSignIn(profile, secrets), tuple(profile.event_types), lookback=lookback
    )


def fixed_tokens(credentials: AccessToken | ClientCredentials) -> TokenProvider:
    """The token provider of credentials that need no sign-in."""
    if isinstance(credentials, AccessToken):
        return StaticTokenProvider(credentials.token)
    return ClientCredentialsTokenProvider(
        credentials.auth_url, credentials.client_id, credentials.client_secret, credentials.audience
    )


def of_hub_profile(profile: HubProfile, secrets: SecretStore, data_dir: Path) -> HubFrom:
    """A saved hub profile of the data dir `data_dir`, its secret read from `secrets` (SignInRequired when it
    is missing)."""
    from tenant_events.hub.credentials import hub_options
    from tenant_events.tenant.team_archive import team_lake

    lake = team_lake(profile.team_lake, secrets) if profile.team_lake is not None else None
    return HubFrom(
        hub_options(profile, secrets, data_dir),
        profile.hub_tenant,
        tuple(profile.event_types),
        team_archive=lake,
    )
