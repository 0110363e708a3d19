"""Adding a tenant from a team hub, and the hub secret it signs in with (kept only in the keyring).

What the "Connect to a team hub" dialog calls, Qt-free:
  `check_hub(options, hub_tenant)`  connects once and reads the tenant's stream: the credentials work and the
                                    collector has published there (or why not, as a user-fixable error)
  `add_hub_profile(...)`            validates every field, keeps the secret in the keyring, saves the profile
  `hub_options(profile, store, data_dir)`  the connection options a viewer of that profile uses
The secret is the password, token, NKey seed (SU…) or the text of a creds file, in the keyring slot
`hub:<name>@<digest>`, bound to the data dir and to what the profile signs in to (its hub URLs, hub tenant,
kind of secret and user: auth/secret_store.py `bound_slot`). Another data dir with a hub of the same name, or a
profile edited to point at another hub, looks up another slot and finds nothing: the secret goes only where it
was given for. Older versions kept it in `hub:<name>`, one slot for every data dir; that slot is never read (it
may hold another data dir's secret): such a hub is added again, and the old slot is then removed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import nats.js.errors
from pydantic import ValidationError

from tenant_events.auth.secret_store import SecretStore, SecretStoreUnavailable, bound_slot
from tenant_events.errors import ConfigError, SignInRequired
from tenant_events.hub.connection import (
    HubAuth,
    HubOptions,
    HubUnavailable,
    close_connection,
    connect,
    creds_seed,
    describe,
    is_refusal,
    seed_public_key,
)
from tenant_events.hub.subjects import HubNames
from tenant_events.paths import AppPaths
from tenant_events.settings.hubs import HubProfile
from tenant_events.settings.shared_file import edited_settings

_SLOT: Final = "hub:"
_SEED_PREFIX: Final = "SU"  # an NKey user seed (nkeys: PREFIX_BYTE_SEED + PREFIX_BYTE_USER)
_CREDS_MARKERS: Final = ("-----BEGIN NATS USER JWT-----", "-----BEGIN USER NKEY SEED-----")


def secret_slot(profile: HubProfile, data_dir: Path) -> str:
    """The keyring slot of `profile`'s secret in the data dir `data_dir`."""
    bound = (profile.hub_urls, profile.hub_tenant, profile.auth, profile.user)
    return bound_slot(_SLOT, profile.name, data_dir.resolve(), *bound)


def _old_slot(name: str) -> str:
    """Where an older version kept it, for every data dir at once: never read, removed when replaced."""
    return f"{_SLOT}{name}"


def check_secret(auth: str, secret: str) -> str:
    """The secret, stripped, if it fits `auth`; ConfigError naming what is wrong otherwise."""
    secret = secret.strip()
    if auth == "none":
        return ""
    if not secret:
        raise ConfigError(f"hub {auth}", "is empty", "paste it again")
    if auth == "nkey" and not (secret.startswith(_SEED_PREFIX) and secret.isalnum()):
        raise ConfigError(
            "hub nkey",
            "is not an NKey user seed (it starts with SU)",
            "use the seed file the hub's administrator gave you, not the public key (U…)",
        )
    if auth == "creds" and not all(marker in secret for marker in _CREDS_MARKERS):
        raise ConfigError(
            "hub creds",
            "is not a NATS creds file (it holds a user JWT and an NKey seed)",
            "pick the .creds file the hub's administrator gave you",
        )
    if auth in ("nkey", "creds"):
        try:
            seed_public_key(secret if auth == "nkey" else creds_seed(secret))
        except ValueError as exc:
            what = "its seed " if auth == "creds" else ""
            raise ConfigError(
                f"hub {auth}", f"{what}{exc}", "use the file the hub's administrator gave you, as it is"
            ) from None
    return secret


def make_hub_profile(**fields: Any) -> HubProfile:
    """Build a hub profile from user input; a bad value raises ConfigError naming the field."""
    try:
        return HubProfile.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "profile"
        message = str(first.get("msg", "")).removeprefix("Value error, ")
        if ": " in message and field == "profile":
            field, message = message.split(": ", 1)
        raise ConfigError(f"hub {field}", message) from None


def add_hub_profile(paths: AppPaths, store: SecretStore, secret: str = "", **fields: Any) -> HubProfile:
    """Validate, keep the secret in the keyring, then save the profile (the secret first: a saved profile
    always has its secret, unless the keyring is session-only — `store.persistent` tells)."""
    profile = make_hub_profile(**fields)
    secret = check_secret(profile.auth, secret)
    with edited_settings(paths) as settings:
        if any(t.name == profile.name for t in settings.tenants):
            raise ConfigError("hub name", f"{profile.name!r} is already a tenant's name", "pick another name")
        slot = secret_slot(profile, paths.data_dir)
        before = settings.hub(profile.name)
        if profile.auth != "none":
            store.set(slot, secret)
        else:
            with contextlib.suppress(Exception):
                store.delete(slot)
        for stale in {_old_slot(profile.name)} | ({secret_slot(before, paths.data_dir)} if before else set()):
            if stale != slot:  # what an older version or the profile's earlier hub kept: never read again
                with contextlib.suppress(Exception):
                    store.delete(stale)
        settings.upsert_hub(profile)
    return profile


def remove_hub_profile(paths: AppPaths, store: SecretStore, name: str) -> None:
    with edited_settings(paths) as settings:
        profile = settings.hub(name)
        settings.hubs = [h for h in settings.hubs if h.name != name]
    if profile is not None:
        store.delete(secret_slot(profile, paths.data_dir))


def forget_hub_secret(store: SecretStore, profile: HubProfile, data_dir: Path) -> str | None:
    """Delete the hub tenant's secret (the tenant was removed); None, or why the keyring refused."""
    try:
        store.delete(secret_slot(profile, data_dir))
    except SecretStoreUnavailable as exc:
        return str(exc)
    return None


def hub_options(profile: HubProfile, store: SecretStore, data_dir: Path) -> HubOptions:
    """Connection options for a saved hub profile, its secret read from this data dir's slot."""
    secret = ""
    if profile.auth != "none":
        secret = store.get(secret_slot(profile, data_dir)) or ""
        if not secret:
            older = bool(store.get(_old_slot(profile.name)))
            raise SignInRequired(
                f"no hub {profile.auth} is stored for {profile.name!r} in this data dir"
                + (
                    " (an older version kept it where every data dir could read it: it is not used)"
                    if older
                    else ""
                ),
                "add the hub again with its credentials",
            )
    auth = HubAuth(profile.auth, profile.user, secret)
    return HubOptions(tuple(profile.hub_urls), auth, profile.ca_file)


@dataclass(frozen=True)
class HubCheck:
    """What a viewer will find: how many messages the tenant's stream holds, from when."""

    stream: str
    messages: int
    first_sequence: int
    last_sequence: int


async def check_hub(options: HubOptions, hub_tenant: str) -> HubCheck:
    """Connect once and read the tenant's stream; HubRefused, HubUnavailable or ConfigError say what failed."""
    names = HubNames(hub_tenant)
    refusals: list[Exception] = []
    nc = await connect(options, reconnect=False, on_error=refusals.append)
    try:
        info = await nc.jetstream(timeout=5.0).stream_info(names.stream)
    except nats.js.errors.NotFoundError:
        raise ConfigError(
            "hub tenant",
            f"the hub has no events of {hub_tenant!r} yet",
            "check the name the relay uses (--hub-tenant), or start the relay first",
        ) from None
    except (nats.errors.Error, TimeoutError) as exc:
        if any(is_refusal(r) for r in refusals):  # (a refused request is never answered: it times out)
            raise ConfigError(
                "hub tenant",
                f"this hub user may not read {hub_tenant!r} (the hub's permissions name other tenants)",
                "check the name the relay uses (--hub-tenant), or ask the hub's operator to let this user read it",
            ) from None
        raise HubUnavailable(
            f"the hub {options.shown} did not answer ({describe(exc)})", "check that JetStream runs there"
        ) from exc
    finally:
        await close_connection(nc)
    state = info.state
    return HubCheck(names.stream, state.messages, state.first_seq, state.last_seq)
