"""Hub profiles: a tenant read from a team hub instead of from the tenant — hub URLs, its name there, how to sign in.

Kept in the settings file next to the tenant profiles (document.py `hubs`); the secret itself (password, token,
NKey seed or creds file) lives only in the keyring (hub/credentials.py). The hub package builds on these names
(hub/subjects.py uses `check_hub_tenant` for its subjects and streams).
"""

from __future__ import annotations

import re
from typing import Final, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tenant_events.http import is_loopback_host
from tenant_events.settings.team_archive import (
    check_catalog,
    check_data_path,
    check_endpoint,
    check_region,
    check_url_style,
)
from tenant_events.values.team_archive import Lake
from tenant_events.wire.event_types import EVENT_TYPE_NAMES

HubAuthKind = Literal["none", "password", "token", "nkey", "creds"]
DEFAULT_PORT: Final = 4222
_SLUG_LIMIT: Final = 64
_TENANT: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def check_hub_tenant(name: str) -> str:
    """`name` if it can be a subject token and a stream name; ValueError saying what is allowed otherwise."""
    if not _TENANT.match(name):
        raise ValueError(f"{name!r} is not a hub tenant name (1–64 lowercase letters, digits or dashes)")
    return name


def check_hub_url(url: str) -> str:
    """`url` as nats://HOST:PORT or tls://HOST:PORT; ValueError naming the problem and the fix otherwise.

    Plain nats:// only to a loopback host: anywhere else the credentials and the events would cross the network
    in clear text (the same rule as http:// for tenants).
    """
    text = url.strip()
    parts = urlsplit(text if "://" in text else f"nats://{text}")
    if parts.scheme not in ("nats", "tls"):
        raise ValueError(f"{url!r} is not a hub URL; use nats://HOST:PORT or tls://HOST:PORT")
    if parts.username or parts.password:
        raise ValueError(f"{url!r} holds credentials; give them separately so they are kept in the keyring")
    if not parts.hostname:
        raise ValueError(f"{url!r} names no host; use nats://HOST:PORT or tls://HOST:PORT")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError(f"{url!r} has a bad port number") from None
    if parts.path not in ("", "/") or parts.query:
        raise ValueError(f"{url!r} has a path or query; a hub URL is just scheme://HOST:PORT")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    if parts.scheme == "nats" and not is_loopback_host(parts.hostname):
        raise ValueError(
            f"{url!r} is not encrypted; use tls://{host}:{port} (nats:// only for this computer)"
        )
    return f"{parts.scheme}://{host}:{port}"


def split_hub_urls(text: str) -> list[str]:
    """`nats://a:4222,nats://b:4222` (a cluster's servers) → checked URLs."""
    urls = [check_hub_url(u) for u in text.split(",") if u.strip()]
    if not urls:
        raise ValueError("no hub URL given; use nats://HOST:PORT or tls://HOST:PORT")
    return urls


class HubProfile(BaseModel):
    """One tenant followed through a hub; `name` is also its database file name."""

    # (no field's value repeated in an error: a team archive's catalog written wrongly may hold a password)
    model_config = ConfigDict(extra="forbid", validate_assignment=True, hide_input_in_errors=True)

    name: str = Field(description="short slug; the database file is <name>.sqlite3")
    hub_urls: list[str] = Field(
        description="the hub's servers: nats://HOST:PORT (this computer) or tls://HOST:PORT"
    )
    hub_tenant: str = Field(description="the tenant's name on the hub (the collector's --hub-tenant)")
    auth: HubAuthKind = Field("none", description="how to sign in to the hub; the secret is in the keyring")
    user: str = Field("", description="user name for auth = password")
    ca_file: str = Field(
        "", description="PEM file of the CA that signed the hub's certificate; empty = system"
    )
    event_types: list[str] = Field(default_factory=list, description="event types to follow; empty = all")
    team_archive: str = Field(
        "",
        description="the team archive's catalog: postgres:dbname=… host=… user=… (no password); empty = none",
    )
    team_archive_path: str = Field(
        "", description="the shared folder or s3://bucket/prefix the team archive's files are in"
    )
    team_archive_endpoint: str = Field(
        "", description="the object storage's endpoint, https://HOST[:PORT]; empty = AWS (s3:// only)"
    )
    team_archive_region: str = Field("", description="the object storage's region; empty = us-east-1")
    team_archive_url_style: str = Field(
        "", description="path or vhost; empty = path with an endpoint, vhost on AWS"
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        try:
            return check_hub_tenant(v)
        except ValueError:
            raise ValueError(f"{v!r} must be 1–{_SLUG_LIMIT} lowercase letters, digits or dashes") from None

    @field_validator("hub_tenant")
    @classmethod
    def _hub_tenant(cls, v: str) -> str:
        return check_hub_tenant(v.strip())

    @field_validator("hub_urls")
    @classmethod
    def _urls(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("is required: at least one nats://HOST:PORT or tls://HOST:PORT")
        return [check_hub_url(u) for u in v]

    @field_validator("event_types")
    @classmethod
    def _event_types(cls, v: list[str]) -> list[str]:
        for name in v:
            if name not in EVENT_TYPE_NAMES:
                raise ValueError(f"{name!r} is not an event type (e.g. user.created)")
        return v

    @field_validator("team_archive")
    @classmethod
    def _team_archive(cls, v: str) -> str:
        return check_catalog(v) if v.strip() else ""

    @field_validator("team_archive_path")
    @classmethod
    def _team_archive_path(cls, v: str) -> str:
        return check_data_path(v) if v.strip() else ""

    @field_validator("team_archive_endpoint")
    @classmethod
    def _team_archive_endpoint(cls, v: str) -> str:
        return check_endpoint(v) if v.strip() else ""

    @field_validator("team_archive_region")
    @classmethod
    def _team_archive_region(cls, v: str) -> str:
        return check_region(v) if v.strip() else ""

    @field_validator("team_archive_url_style")
    @classmethod
    def _team_archive_url_style(cls, v: str) -> str:
        return check_url_style(v) if v.strip() else ""

    @model_validator(mode="after")
    def _user(self) -> HubProfile:
        if self.auth == "password" and not self.user.strip():
            raise ValueError("user: is required to sign in with a password")
        if bool(self.team_archive) != bool(self.team_archive_path):
            missing = "team_archive_path" if self.team_archive else "team_archive"
            raise ValueError(f"{missing}: is required for a team archive (give both, or neither)")
        if self.team_archive and self.event_types:
            raise ValueError("event_types: a team archive holds every event type; follow them all to read it")
        lake = self.team_lake
        if lake is not None and not lake.in_object_storage:
            for key in ("team_archive_endpoint", "team_archive_region", "team_archive_url_style"):
                if getattr(self, key):
                    raise ValueError(f"{key}: is for files in object storage (an s3:// location) only")
        return self

    @property
    def team_lake(self) -> Lake | None:
        """Where the team archive is (None: none); its secrets are the keyring's."""
        if not self.team_archive:
            return None
        return Lake(
            self.team_archive,
            self.team_archive_path,
            self.team_archive_endpoint,
            self.team_archive_region,
            self.team_archive_url_style,
        )

    @property
    def kind(self) -> str:
        return "hub"
