"""Adding, editing, removing and listing alert destinations: the settings file and the keyring, kept in step.

The keyring slot `destination:<name>@<digest>` holds the whole Apprise URL; the digest binds it to this data dir
(auth/secret_store.py `bound_slot`), so a second data dir with a destination of the same name has a slot of its
own and never sends to the other's URL. The settings file holds the masked URL, the filter, and the URL's id —
a random one, made anew with each URL saved (a stop is for one URL: a new one lifts it), never derived from the
URL: nothing in the file can be checked against a guess.

The keyring is written first: a crash in between leaves a secret with no profile (overwritten by the next add
of that name), never a profile whose URL is lost.

Older versions kept the URL in `destination:<name>`, one slot for every data dir, and its unsalted hash in the
settings file. Such a URL is taken over into this data dir's slot only when the file holds the hash of that very
URL (the slot may hold another data dir's); the hash leaves the file either way (`_take_over`).
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterable
from typing import Any, Final

from pydantic import ValidationError

from tenant_events.auth.secret_store import (
    SecretStore,
    SecretStoreUnavailable,
    SecretTooLong,
    bound_slot,
    check_secret_length,
)
from tenant_events.destinations.message import test_message
from tenant_events.destinations.send import Outcome, send
from tenant_events.destinations.urls import instantiate, legacy_fingerprint, mask
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.destinations import (
    DestinationProfile,
    check_destination_name,
    resolved_by_default,
)
from tenant_events.settings.shared_file import edited_settings

SLOT: Final = "destination:"
_LEGACY_ID: Final = re.compile(r"^[0-9a-f]{16}$")  # an older version's hash of the URL


def slot(paths: AppPaths, name: str) -> str:
    """The keyring slot of destination `name` in the data dir of `paths`."""
    return bound_slot(SLOT, name, paths.data_dir.resolve())


def new_url_id() -> str:
    """A URL's id: random ("r" + 16 hex digits, never an older version's 16-digit hash)."""
    return "r" + secrets.token_hex(8)


def make_destination(name: str, url: str, **fields: Any) -> DestinationProfile:
    """A checked profile for `url` (with a new URL id); ConfigError naming the field otherwise."""
    try:
        check_destination_name(name)
    except ValueError as exc:
        raise ConfigError("destination name", str(exc)) from None
    try:
        check_secret_length("the URL", url.strip())
    except SecretTooLong as exc:
        raise ConfigError("destination url", str(exc)) from None
    instantiate(url)
    fields.setdefault("send_resolved", resolved_by_default(url))  # written out: the file says what happens
    try:
        return DestinationProfile(name=name, url_masked=mask(url), fingerprint=new_url_id(), **fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "destination"
        raise ConfigError(f"destination {where}", str(err["msg"]).removeprefix("Value error, ")) from None


def save_destination(
    paths: AppPaths, store: SecretStore, profile: DestinationProfile, url: str | None
) -> DestinationProfile:
    """Add or replace `profile`; `url` None keeps the stored URL and its id (an edit of the filter only)."""
    with edited_settings(paths) as settings:
        if url is not None:
            if not store.persistent:
                raise UserFixableError(
                    "no system keyring to keep the destination's URL in",
                    "unlock or install a system keyring (e.g. GNOME Keyring, KWallet)",
                )
            try:
                store.set(slot(paths, profile.name), url.strip())
            except SecretStoreUnavailable as exc:
                raise UserFixableError(str(exc), "unlock the system keyring and try again") from None
        else:
            old = next((d for d in settings.destinations if d.name == profile.name), None)
            if old is not None:  # the same URL: a stop of it holds
                profile = profile.model_copy(update={"fingerprint": old.fingerprint})
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
        url = store.get(slot(paths, name))
        store.delete(slot(paths, name))
        if url and store.get(SLOT + name) == url:  # what an older version kept of the same URL
            store.delete(SLOT + name)


def find_destination(paths: AppPaths, name: str) -> DestinationProfile:
    destinations = load_settings(paths).destinations
    for d in destinations:
        if d.name == name:
            return d
    raise ConfigError("destination", f"no destination named {name!r}", f"known: {known(destinations)}")


def destination_url(store: SecretStore, paths: AppPaths, profile: DestinationProfile) -> str:
    """The whole URL from this data dir's slot; UserFixableError when it is not there (another computer, a wiped
    keyring, a slot an older version shared with another data dir)."""
    try:
        url = store.get(slot(paths, profile.name))
        if not url and _LEGACY_ID.match(profile.fingerprint):
            url = _take_over(store, paths, profile)
    except SecretStoreUnavailable as exc:
        raise UserFixableError(str(exc), "unlock the system keyring") from None
    if not url:
        raise UserFixableError(
            f"destination {profile.name}: its URL is not in the keyring",
            f"add it again: tenant-events destinations add {profile.name} URL",
        )
    return url


def _take_over(store: SecretStore, paths: AppPaths, profile: DestinationProfile) -> str | None:
    """The URL an older version kept in the slot every data dir shared, when this data dir's settings hold the
    hash of exactly that URL (copied to this data dir's slot; the shared one stays for the others); the hash is
    replaced by a random id in the settings file whether or not it matched."""
    kept = store.get(SLOT + profile.name)
    url = kept if kept and legacy_fingerprint(kept) == profile.fingerprint else None
    if url is not None:
        store.set(slot(paths, profile.name), url)
    with edited_settings(paths) as settings:
        settings.destinations = [
            d.model_copy(update={"fingerprint": new_url_id()})
            if d.name == profile.name and d.fingerprint == profile.fingerprint
            else d
            for d in settings.destinations
        ]
    return url


def known(destinations: Iterable[DestinationProfile]) -> str:
    return ", ".join(d.name for d in destinations) or "none"


def send_test_alert(store: SecretStore, paths: AppPaths, profile: DestinationProfile) -> Outcome:
    """Send the test message to `profile` now (blocking: run it in a thread; within send.py's deadline)."""
    return send(destination_url(store, paths, profile), test_message(profile.name))
