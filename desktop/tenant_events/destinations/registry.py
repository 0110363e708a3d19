"""Adding, editing, removing and listing alert destinations: the settings file and the keyring, kept in step.

The keyring slot `destination:<name>` holds the whole Apprise URL; the settings file holds the masked URL and
the filter (settings/destinations.py). The keyring is written first: a crash in between leaves a secret with no
profile (overwritten by the next add of that name), never a profile whose URL is lost.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from tenant_events.auth.secret_store import SecretStore, SecretStoreUnavailable
from tenant_events.destinations.message import test_message
from tenant_events.destinations.send import Outcome, send
from tenant_events.destinations.urls import fingerprint, instantiate, mask
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.destinations import (
    DestinationProfile,
    check_destination_name,
    resolved_by_default,
)
from tenant_events.settings.shared_file import edited_settings

SLOT = "destination:"


def slot(name: str) -> str:
    return SLOT + name


def make_destination(name: str, url: str, **fields: Any) -> DestinationProfile:
    """A checked profile for `url`; ConfigError naming the field otherwise."""
    try:
        check_destination_name(name)
    except ValueError as exc:
        raise ConfigError("destination name", str(exc)) from None
    instantiate(url)
    fields.setdefault("send_resolved", resolved_by_default(url))  # written out: the file says what happens
    try:
        return DestinationProfile(name=name, url_masked=mask(url), fingerprint=fingerprint(url), **fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "destination"
        raise ConfigError(f"destination {where}", str(err["msg"]).removeprefix("Value error, ")) from None


def save_destination(
    paths: AppPaths, store: SecretStore, profile: DestinationProfile, url: str | None
) -> DestinationProfile:
    """Add or replace `profile`; `url` None keeps the stored URL (an edit of the filter only)."""
    with edited_settings(paths) as settings:
        if url is not None:
            if not store.persistent:
                raise UserFixableError(
                    "no system keyring to keep the destination's URL in",
                    "unlock or install a system keyring (e.g. GNOME Keyring, KWallet)",
                )
            try:
                store.set(slot(profile.name), url.strip())
            except SecretStoreUnavailable as exc:
                raise UserFixableError(str(exc), "unlock the system keyring and try again") from None
        settings.destinations = [d for d in settings.destinations if d.name != profile.name] + [profile]
    return profile


def remove_destination(paths: AppPaths, store: SecretStore, name: str) -> None:
    """Remove `name` from the settings and its URL from the keyring; ConfigError if there is none."""
    with edited_settings(paths) as settings:
        if not any(d.name == name for d in settings.destinations):
            raise ConfigError(
                "destination", f"no destination named {name!r}", f"known: {known(settings.destinations)}"
            )
        settings.destinations = [d for d in settings.destinations if d.name != name]
    # the profile is gone: an orphaned slot is never read, and the next add of the name overwrites it
    with contextlib.suppress(SecretStoreUnavailable):
        store.delete(slot(name))


def find_destination(paths: AppPaths, name: str) -> DestinationProfile:
    destinations = load_settings(paths).destinations
    for d in destinations:
        if d.name == name:
            return d
    raise ConfigError("destination", f"no destination named {name!r}", f"known: {known(destinations)}")


def destination_url(store: SecretStore, profile: DestinationProfile) -> str:
    """The whole URL from the keyring; UserFixableError when it is not there (another computer, a wiped keyring)."""
    try:
        url = store.get(slot(profile.name))
    except SecretStoreUnavailable as exc:
        raise UserFixableError(str(exc), "unlock the system keyring") from None
    if not url:
        raise UserFixableError(
            f"destination {profile.name}: its URL is not in the keyring",
            f"add it again: tenant-events destinations add {profile.name} URL",
        )
    return url


def known(destinations: Iterable[DestinationProfile]) -> str:
    return ", ".join(d.name for d in destinations) or "none"


def send_test_alert(store: SecretStore, profile: DestinationProfile) -> Outcome:
    """Send the test message to `profile` now (blocking: run it in a thread)."""
    return send(destination_url(store, profile), test_message(profile.name))
