"""The whole settings document: profiles, hubs and preferences, with lookups by profile name."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tenant_events.alert_settings import AlertSettings
from tenant_events.errors import ConfigError
from tenant_events.settings.destinations import DestinationProfile
from tenant_events.settings.hubs import HubProfile
from tenant_events.settings.preferences import NotificationSettings, RetentionSettings
from tenant_events.settings.profiles import TenantProfile
from tenant_events.url_forms import normalize_url

SCHEMA_VERSION = 3  # 2: `hubs`, tenants followed through a team hub; 3: alert lifecycle choices


class Settings(BaseModel):
    """Everything the user can set; window geometry lives elsewhere (CONTRIBUTING.md "Style")."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    tenants: list[TenantProfile] = Field(default_factory=list)
    hubs: list[HubProfile] = Field(default_factory=list, description="tenants followed through a team hub")
    active_tenant: str | None = Field(None, description="profile shown at start")
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
    destinations: list[DestinationProfile] = Field(
        default_factory=list,
        description="where alerts are sent (Apprise URLs; the secrets are in the keyring)",
    )
    start_at_login: bool = Field(False, description="start the tray app when the user logs in")
    theme: Literal["system", "light", "dark"] = "system"

    @model_validator(mode="after")
    def _unique_names(self) -> Settings:
        names = [t.name for t in self.tenants] + [h.name for h in self.hubs]  # one database each
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"tenants: duplicate profile name(s) {dupes}")
        return self

    def tenant(self, name: str | None) -> TenantProfile:
        """The named profile, or the only one when `name` is None."""
        if name is None:
            if len(self.tenants) == 1:
                return self.tenants[0]
            if not self.tenants:
                raise ConfigError(
                    "tenant",
                    "no tenant profile yet",
                    "run: tenant-events login --auth-url URL --client-id ID",
                )
            names = ", ".join(t.name for t in self.tenants)
            raise ConfigError("tenant", f"several profiles exist ({names})", "pick one with --tenant NAME")
        for profile in self.tenants:
            if profile.name == name:
                return profile
        if not self.tenants:
            raise ConfigError(
                "tenant",
                f"no profile named {name!r}: there are no tenant profiles yet",
                "add one: tenant-events login --auth-url URL --client-id ID",
            )
        raise ConfigError(
            "tenant",
            f"no profile named {name!r}; known: {self.describe_profiles()}",
            "pick one with --tenant NAME",
        )

    def describe_profiles(self) -> str:
        """'acme (https://acme.example/api/v2), demo (http://127.0.0.1:5000/api/v2)': names with stream URLs."""
        return ", ".join(f"{t.name} ({t.base_url})" for t in self.tenants)

    def streaming_from(self, base_url: str) -> list[TenantProfile]:
        """The profiles whose stream lives at `base_url` (compared as normalize_url does)."""
        wanted = normalize_url(base_url)
        return [t for t in self.tenants if normalize_url(t.base_url) == wanted]

    def upsert(self, profile: TenantProfile) -> None:
        self.tenants = [t for t in self.tenants if t.name != profile.name] + [profile]

    def hub(self, name: str | None) -> HubProfile | None:
        """The hub profile named `name`, if there is one."""
        return next((h for h in self.hubs if h.name == name), None)

    def upsert_hub(self, profile: HubProfile) -> None:
        self.hubs = [h for h in self.hubs if h.name != profile.name] + [profile]
