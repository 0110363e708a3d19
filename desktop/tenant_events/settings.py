"""The settings file: tenant profiles and app preferences, validated, versioned, written atomically (contract 3).

`load_settings(paths)` reads `AppPaths.settings_file`; a file that is not valid JSON or fails validation is
moved aside (`settings.json.broken-<time>`) and reported through `notices`, never silently dropped. An older
`schema_version` is backed up (`settings.json.v<N>.bak`) and then migrated step by step (MIGRATIONS); a newer
one is refused so an old app cannot overwrite it. `save_settings` writes a temp file (0600), fsyncs and renames.
Bad profile values raise ConfigError naming the field.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tenant_events.alert_settings import WEEKDAYS, AlertSettings, Weekday
from tenant_events.errors import ConfigError
from tenant_events.http import InsecureURLError, check_url, is_loopback_host
from tenant_events.hub.profile import HubProfile
from tenant_events.paths import AppPaths
from tenant_events.url_forms import loopback_callbacks, normalize_url
from tenant_events.wire.event_types import EVENT_TYPE_NAMES

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: `hubs`, tenants followed through a team hub
DEFAULT_SCOPES = ("openid", "profile", "email", "offline_access", "read:events")
_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
# Auth0 client IDs are 32 alphanumerics; other OPs use dashes/dots/underscores. No spaces, quotes or slashes.
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._~-]{1,128}$")
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")
_REQUIRED_SCOPES = ("openid", "read:events")  # sign-in (OIDC) and the events API (spec 000)
_HH_MM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")
_HOST = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$"
)


def known_event_types(names: list[str]) -> list[str]:
    """`names` if each is one of spec 000's 22 event types; else ValueError naming the first unknown one."""
    for name in names:
        if name not in EVENT_TYPE_NAMES:
            raise ValueError(
                f"{name!r} is not an event type (spec 000 lists the 22 names, e.g. user.created)"
            )
    return names


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
        if not _SLUG.match(v):
            raise ValueError(f"{v!r} must be 1–64 lowercase letters, digits or dashes")
        return v

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
        """Auth0's issuer form: the auth URL with a trailing slash (login.md §1)."""
        return self.auth_url + "/"

    @property
    def scope(self) -> str:
        return " ".join(self.scopes)


def _field_of(error: dict[str, Any]) -> str:
    loc = [str(p) for p in error.get("loc", ())]
    msg = str(error.get("msg", ""))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    # model-level URL checks say "auth_url: ..." themselves
    if not loc and ": " in msg:
        return msg.split(": ", 1)[0]
    return ".".join(loc) or "profile"


def make_profile(**fields: Any) -> TenantProfile:
    """Build a profile from user input; a bad value raises ConfigError naming the field."""
    if not fields.get("domain") and fields.get("auth_url"):
        fields["domain"] = urlsplit(str(fields["auth_url"])).netloc
    if not fields.get("domain"):
        raise ConfigError("profile domain", "is required (the tenant's domain, e.g. acme.eu.auth0.com)")
    if not fields.get("name"):
        fields["name"] = slugify(str(fields["domain"]))
    try:
        return TenantProfile.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = _field_of(dict(first))
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        message = message.removeprefix(f"{field}: ")
        raise ConfigError(f"profile {field}", message) from None


def callback_urls(profile: TenantProfile) -> list[str]:
    """The exact Allowed Callback URLs to register for this profile's client, nothing else (they are copied)."""
    return loopback_callbacks(profile.redirect_ports)


class NotificationSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(True, description="raise desktop notifications for new events")
    event_types: list[str] = Field(default_factory=list, description="types that notify; empty = all")
    do_not_disturb: bool = Field(False, description="suppress notifications; events are still stored")
    quiet_hours: tuple[str, str] | None = Field(
        None, description="('22:00', '07:00'): no notifications between"
    )
    do_not_disturb_until: float | None = Field(
        None, description="unix time when a timed do-not-disturb (1 h / until tomorrow) ends; None = off"
    )
    quiet_days: list[Weekday] = Field(
        default_factory=lambda: list(WEEKDAYS),
        description="days the quiet hours apply on (the day they start)",
    )
    critical_passes_dnd: bool = Field(
        False, description="alerts of critical rules notify even during do-not-disturb and quiet hours"
    )

    @field_validator("event_types")
    @classmethod
    def _event_types(cls, v: list[str]) -> list[str]:
        return known_event_types(v)

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, v: tuple[str, str] | None) -> tuple[str, str] | None:
        for t in v or ():
            if not _HH_MM.match(t):
                raise ValueError(f"{t!r} is not a time of day as HH:MM (00:00–23:59)")
        return v


class RetentionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_age_days: int | None = Field(
        90, ge=1, description="delete stored events older than this; None = keep"
    )
    max_events: int | None = Field(1_000_000, ge=1000, description="per tenant; oldest deleted first")


class Settings(BaseModel):
    """Everything the user can set; window geometry lives elsewhere (STYLE §8)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    tenants: list[TenantProfile] = Field(default_factory=list)
    hubs: list[HubProfile] = Field(default_factory=list, description="tenants followed through a team hub")
    active_tenant: str | None = Field(None, description="profile shown at start")
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    alerts: AlertSettings = Field(default_factory=AlertSettings)
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


def _v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Files written before versioning: same keys, only `schema_version` missing."""
    return {**data, "schema_version": 1}


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Hub profiles arrived: nothing to convert, but an older app must refuse the file, not set it aside."""
    return {**data, "schema_version": 2}


# MIGRATIONS[n] turns a version-n dict into version n+1; run in order after a backup.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {0: _v0_to_v1, 1: _v1_to_v2}


def _move_aside(path: os.PathLike[str] | str, reason: str, notices: list[str]) -> None:
    target = f"{os.fspath(path)}.broken-{time.strftime('%Y%m%dT%H%M%S')}"
    os.replace(path, target)
    notice = f"The settings file {os.fspath(path)} could not be used ({reason}); it was moved to {target} and defaults are in use."
    log.warning("%s", notice)
    notices.append(notice)


def load_settings(paths: AppPaths, notices: list[str] | None = None) -> Settings:
    """Read, migrate and validate the settings file; defaults when there is none."""
    notices = notices if notices is not None else []
    path = paths.settings_file
    if not path.exists():
        return Settings()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("the top level is not an object")
    except (ValueError, UnicodeDecodeError) as exc:
        _move_aside(path, f"not valid JSON: {exc}", notices)
        return Settings()
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or version < 0:
        _move_aside(path, f"schema_version {version!r} is not a version", notices)
        return Settings()
    if version > SCHEMA_VERSION:
        raise ConfigError(
            "schema_version",
            f"{path} was written by a newer Tenant Events (schema {version}, this app knows {SCHEMA_VERSION})",
            "update Tenant Events",
        )
    if version < SCHEMA_VERSION:
        shutil.copy2(path, f"{path}.v{version}.bak")
        while version < SCHEMA_VERSION:
            data = MIGRATIONS[version](data)
            version += 1
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        _move_aside(path, f"{_field_of(dict(first))}: {first.get('msg')}", notices)
        return Settings()
    if data.get("schema_version", 0) != (
        json.loads(path.read_text(encoding="utf-8")).get("schema_version", 0)
    ):
        save_settings(paths, settings)  # migrated: write the new version once (the backup is beside it)
    return settings


def save_settings(paths: AppPaths, settings: Settings) -> None:
    """Atomic replace: temp file in the same dir (0600), fsync, rename, fsync the dir."""
    path = paths.settings_file
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    payload = settings.model_dump_json(indent=2).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # not every platform can open a directory
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
