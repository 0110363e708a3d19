"""Which tenant `tenant-events stream` follows, and with which token.

    --tenant NAME        ─▶ that profile (its URLs, event types and stored sign-in)
    --base-url URL       ─▶ the profile that streams from URL, when one does (compared by normalize_url);
                            otherwise a bare URL: a token from the environment or client credentials
    neither              ─▶ the only profile

Tokens, in order: TENANT_EVENTS_ACCESS_TOKEN; --client-id with TENANT_EVENTS_CLIENT_SECRET; the profile's
stored sign-in. A stored refresh token is bound to its profile's URLs, so matching on the stream URL never
sends it to another host.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

from tenant_events.errors import ConfigError, SignInRequired
from tenant_events.http import InsecureURLError, check_url
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings, TenantProfile, load_settings, slugify
from tenant_events.tenant.sources import AccessToken, ClientCredentials, Credentials, StoredSignIn, StreamFrom

TOKEN_ENV = "TENANT_EVENTS_ACCESS_TOKEN"
SECRET_ENV = "TENANT_EVENTS_CLIENT_SECRET"


@dataclass(frozen=True)
class StreamTarget:
    """Where to stream from and into which database; `profile` is None for a bare --base-url."""

    name: str
    base_url: str
    auth_url: str
    audience: str
    profile: TenantProfile | None
    settings: Settings


def resolve_target(args: argparse.Namespace, paths: AppPaths) -> StreamTarget:
    notices: list[str] = []
    settings = load_settings(paths, notices)
    for notice in notices:  # a settings file moved aside: the log is a file here, so say it on stderr too
        print(f"tenant-events: {notice}", file=sys.stderr)
    if not args.base_url:
        profile = settings.tenant(args.tenant)
        return StreamTarget(
            profile.name, profile.base_url, profile.auth_url, profile.audience, profile, settings
        )
    try:
        base_url = check_url(args.base_url).rstrip("/")
    except InsecureURLError as exc:
        raise ConfigError("--base-url", str(exc)) from None
    matches = settings.streaming_from(base_url)
    if len(matches) > 1:
        names = ", ".join(t.name for t in matches)
        raise ConfigError(
            "--base-url", f"several profiles stream from {base_url} ({names})", "pick one with --tenant NAME"
        )
    if matches:
        p = matches[0]
        return StreamTarget(args.name or p.name, p.base_url, p.auth_url, p.audience, p, settings)
    parts = urlsplit(base_url)
    auth_url = f"{parts.scheme}://{parts.netloc}"
    return StreamTarget(
        args.name or slugify(parts.netloc), base_url, auth_url, base_url + "/", None, settings
    )


async def credentials(args: argparse.Namespace, target: StreamTarget) -> Credentials:
    env_token = os.environ.get(TOKEN_ENV)
    if env_token:
        return AccessToken(env_token)
    if args.client_id:
        return ClientCredentials(
            target.auth_url, args.client_id, os.environ.get(SECRET_ENV, ""), target.audience
        )
    if target.profile is None:
        raise _no_sign_in(target)
    from tenant_events.tenant.keyring import open_secret_store

    return StoredSignIn(target.profile, (await asyncio.to_thread(open_secret_store)).store)


async def stream_source(args: argparse.Namespace, target: StreamTarget) -> StreamFrom:
    """What `stream` and `relay` follow: the target with the command line's types, start and timeout."""
    profile = target.profile
    event_types = tuple(args.event_type) or tuple(profile.event_types if profile else ())
    return StreamFrom(
        target.base_url,
        await credentials(args, target),
        event_types,
        from_timestamp=args.from_timestamp,
        stall_timeout=args.stall_timeout,
    )


def _no_sign_in(target: StreamTarget) -> SignInRequired:
    login = f"tenant-events login --auth-url {target.auth_url} --client-id ID --base-url {target.base_url}"
    if not target.settings.tenants:
        return SignInRequired(
            f"no access token for {target.base_url}",
            f"set {TOKEN_ENV}, use --client-id with {SECRET_ENV}, or sign in first: {login}",
        )
    return SignInRequired(
        f"no stored sign-in streams from {target.base_url}; stored profiles: "
        + target.settings.describe_profiles(),
        f"use one with --tenant NAME, or sign in for this URL: {login}",
    )
