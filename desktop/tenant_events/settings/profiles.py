"""Tenant profiles: one tenant the app signs in to, its URLs, client and scopes, checked field by field.

Bad values raise ConfigError naming the field (`make_profile`), so the CLI and the connect dialog can say which
value to fix.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tenant_events.errors import ConfigError
from tenant_events.http import InsecureURLError, check_url, is_loopback_host
from tenant_events.paths import check_profile_name
from tenant_events.settings.field_checks import field_of, known_event_types
from tenant_events.url_forms import loopback_callbacks, normalize_url

DEFAULT_SCOPES = ("openid", "profile", "email", "offline_access", "read:events")
# Auth0 client IDs are 32 alphanumerics; other OPs use dashes/dots/underscores. No spaces, quotes or slashes.
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")
_REQUIRED_SCOPES = ("openid", "read:events")  # sign-in (OIDC) and the events API
_HOST = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$"
)


def slugify(text: str) -> str:
    """A profile name from a domain: 'acme.eu.auth0.com' → 'acme-eu-auth0-com'."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return slug or "tenant"


class TenantProfile(BaseModel):
    """One tenant the app signs in to; `name` is also its database file name."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    name: str = Field(description="short slug; the database file is <name>.sqlite3")
    domain: str = Field(
        description="tenant domain, e.g. acme.eu.auth0.com (or 127.0.0.1:PORT for the simulator)"
    )
    auth_url: str = Field("", description="https://<domain>; http:// only for a loopback simulator")
    base_url: str = Field("", description="where the event stream lives; default {auth_url}/api/v2")
    client_id: str = Field(description="the native application's client ID")
    audience: str = Field("", description="API audience; default https://<domain>/api/v2/")
    scopes: list[str] = Field(default_factory=lambda: list(DEFAULT_SCOPES))
    event_types: list[str] = Field(default_factory=list, description="event types to follow; empty = all")
    redirect_ports: list[int] = Field(
        default_factory=list,
        description="fixed loopback ports registered as callback URLs (Auth0 matches the port exactly); "
        "empty = any port (RFC 8252 §7.3)",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_profile_name(v)

    @field_validator("client_id")
    @classmethod
    def _client_id(cls, v: str) -> str:
        if not _CLIENT_ID.match(v):
            raise ValueError(f"{v!r} is not a client ID (1–128 of A-Z a-z 0-9 . _ ~ -)")
        return v

    @field_validator("domain")
    @classmethod
    def _domain(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("is required (the tenant's domain, e.g. acme.eu.auth0.com)")
        if "://" in v:
            parts = urlsplit(v)
            if parts.scheme not in ("http", "https") or (
                parts.scheme == "http" and not is_loopback_host(parts.hostname)
            ):
                raise ValueError(f"{v!r} must use https:// (http:// only for a loopback simulator)")
            if parts.path.strip("/") or parts.query or parts.fragment:
                raise ValueError(f"{v!r} has a path: give the domain alone, e.g. {parts.netloc}")
            v = parts.netloc
        v = v.rstrip("/")
        if "/" in v or "?" in v or "#" in v:
            host = re.split(r"[/?#]", v, maxsplit=1)[0]
            raise ValueError(f"{v!r} has a path: give the domain alone, e.g. {host}")
        if not _HOST.match(v):
            raise ValueError(f"{v!r} is not a domain name")
        return v

    @field_validator("audience")
    @classmethod
    def _audience(cls, v: str) -> str:
        if any(c.isspace() or not c.isprintable() for c in v):
            raise ValueError(f"{v!r} must not contain spaces or control characters")
        return v

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, v: list[str]) -> list[str]:
        for scope in v:
            if not _SCOPE_TOKEN.match(scope):
                raise ValueError(
                    f"{scope!r} is not a scope (RFC 6749 §3.3: no spaces, quotes or backslashes)"
                )
        missing = [s for s in _REQUIRED_SCOPES if s not in v]
        if missing:
            raise ValueError(f"must include {' and '.join(missing)} (sign-in and the events API need them)")
        return v

    @field_validator("event_types")
    @classmethod
    def _event_types(cls, v: list[str]) -> list[str]:
        return known_event_types(v)

    @field_validator("redirect_ports")
    @classmethod
    def _ports(cls, v: list[int]) -> list[int]:
        for port in v:
            if not 1024 <= port <= 65535:
                raise ValueError(f"{port} is not a usable port (1024–65535)")
        return v

    @model_validator(mode="after")
    def _urls(self) -> TenantProfile:
        host = self.domain.rsplit(":", 1)[0]
        scheme = "http" if is_loopback_host(host) else "https"
        defaults = {
            "auth_url": f"{scheme}://{self.domain}",
            "base_url": "",
            "audience": "",
        }
        if not self.auth_url:
            object.__setattr__(self, "auth_url", defaults["auth_url"])
        object.__setattr__(self, "auth_url", self.auth_url.rstrip("/"))
        if not self.base_url:
            object.__setattr__(self, "base_url", self.auth_url + "/api/v2")
        if not self.audience:
            object.__setattr__(self, "audience", self.auth_url + "/api/v2/")
        for name in ("auth_url", "base_url"):
            try:
                check_url(getattr(self, name))
            except InsecureURLError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return self

    @property
    def issuer(self) -> str:
        """Auth0's issuer form: the auth URL with a trailing slash."""
        return self.auth_url + "/"

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)


def make_profile(**fields: Any) -> TenantProfile:
    """Build a profile from user input; a bad value raises ConfigError naming the field."""
    if not fields.get("domain") and fields.get("auth_url"):
        try:  # before the domain is taken from it: "http://[zz::1]" or ":99999" is a bad URL, not a bad domain
            fields["domain"] = urlsplit(check_url(str(fields["auth_url"]))).netloc
        except InsecureURLError as exc:
            raise ConfigError("profile auth_url", str(exc)) from None
    if not fields.get("domain"):
        raise ConfigError("profile domain", "is required (the tenant's domain, e.g. acme.eu.auth0.com)")
    if not fields.get("name"):
        fields["name"] = slugify(str(fields["domain"]))
    try:
        return TenantProfile.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = field_of(dict(first))
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        message = message.removeprefix(f"{field}: ")
        raise ConfigError(f"profile {field}", message) from None


def same_tenant(a: TenantProfile, b: TenantProfile) -> bool:
    """Both sign in at the same issuer and stream from the same place (a client ID may change)."""
    return a.issuer == b.issuer and normalize_url(a.base_url) == normalize_url(b.base_url)


def tenant_kept(settings_tenants: list[TenantProfile], profile: TenantProfile, field: str) -> None:
    """ConfigError naming `field` when a saved profile of that name follows another tenant: a profile keeps its
    tenant (its stored sign-in and its database are that tenant's)."""
    existing = next((t for t in settings_tenants if t.name == profile.name), None)
    if existing is not None and not same_tenant(existing, profile):
        raise ConfigError(
            field,
            f"profile {profile.name!r} follows {existing.auth_url} (events from {existing.base_url}), not "
            f"{profile.auth_url} (events from {profile.base_url})",
            "a profile keeps its tenant: give the new one another name",
        )


def callback_urls(profile: TenantProfile) -> list[str]:
    """The exact Allowed Callback URLs to register for this profile's client, nothing else (they are copied)."""
    return loopback_callbacks(profile.redirect_ports)
