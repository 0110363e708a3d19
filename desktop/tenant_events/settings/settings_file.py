"""The settings file: read, migrated, validated and written atomically.

`load_settings(paths)` reads `AppPaths.settings_file`; a file that is not valid JSON or fails validation is
moved aside (`settings.json.broken-<time>`) and reported through `notices`, never silently dropped. An older
`schema_version` is backed up (`settings.json.v<N>.bak`) and then migrated step by step (MIGRATIONS); a newer
one is refused so an old app cannot overwrite it. `save_settings` writes a temp file (0600), fsyncs and renames.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.settings.destinations import resolved_by_default
from tenant_events.settings.document import SCHEMA_VERSION, Settings
from tenant_events.settings.field_checks import field_of

log = logging.getLogger(__name__)


def _v0_to_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Files written before versioning: same keys, only `schema_version` missing."""
    return {**data, "schema_version": 1}


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Hub profiles arrived: nothing to convert, but an older app must refuse the file, not set it aside."""
    return {**data, "schema_version": 2}


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Alerts got a life (repeats, resolves): each destination says whether it is told of resolves, as its kind
    is by default (pagers and webhooks yes, e-mail and chat no), and how often an unacknowledged critical alert
    is sent again; the file then says what the app does instead of leaving it to a default a later version
    might change. Rules and notifications take their new fields' defaults (documented in README "Alerts")."""
    destinations = []
    for entry in data.get("destinations") or []:
        if isinstance(entry, dict):
            url = str(entry.get("url_masked", ""))
            entry = {"send_resolved": resolved_by_default(url), "repeat_minutes": 60.0, **entry}
        destinations.append(entry)
    out = {**data, "schema_version": 3}
    if "destinations" in data:
        out["destinations"] = destinations
    return out


# MIGRATIONS[n] turns a version-n dict into version n+1; run in order after a backup.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: _v0_to_v1,
    1: _v1_to_v2,
    2: _v2_to_v3,
}


def _move_aside(path: os.PathLike[str] | str, reason: str, notices: list[str]) -> None:
    target = f"{os.fspath(path)}.broken-{time.strftime('%Y%m%dT%H%M%S')}"
    os.replace(path, target)
    notice = f"The settings file {os.fspath(path)} could not be used ({reason}); it was moved to {target} and defaults are in use."
    log.warning("%s", notice)
    notices.append(notice)


MAX_DEPTH = 32  # the real document nests about 6 deep; far more is a damaged or hostile file


def _depth(value: object) -> int:
    """How deeply lists and objects nest in `value`, without recursion (the validator would recurse)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:
            stack.extend((child, level + 1) for child in children)
    return deepest


class Unusable(ValueError):
    """A settings file that cannot be used as it is; the message says why (for the notice)."""


def read_document(path: Path) -> dict[str, Any]:
    """The file's JSON object with a usable `schema_version`; Unusable says what is wrong (OSError: unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("the top level is not an object")
    except (ValueError, UnicodeDecodeError) as exc:
        raise Unusable(f"not valid JSON: {exc}") from None
    except RecursionError:  # json's C decoder recurses once per level
        raise Unusable("not valid JSON: nested too deeply") from None
    if _depth(data) > MAX_DEPTH:
        raise Unusable(f"nested more than {MAX_DEPTH} levels deep, past what a settings file holds")
    version = data.get("schema_version", 0)
    if not isinstance(version, int) or version < 0:
        raise Unusable(f"schema_version {version!r} is not a version")
    return data


def migrated(data: dict[str, Any]) -> dict[str, Any]:
    """An older document brought to SCHEMA_VERSION (in memory)."""
    version = data.get("schema_version", 0)
    while version < SCHEMA_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
    return data


def validated(data: dict[str, Any]) -> Settings:
    """The document as Settings; Unusable names the first field that is wrong."""
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise Unusable(f"{field_of(dict(first))}: {first.get('msg')}") from None


def load_settings(paths: AppPaths, notices: list[str] | None = None) -> Settings:
    """Read, migrate and validate the settings file; defaults when there is none."""
    notices = notices if notices is not None else []
    path = paths.settings_file
    if not path.exists():
        return Settings()
    try:
        data = read_document(path)
    except Unusable as exc:
        _move_aside(path, str(exc), notices)
        return Settings()
    version = data.get("schema_version", 0)
    if version > SCHEMA_VERSION:
        raise ConfigError(
            "schema_version",
            f"{path} was written by a newer Tenant Events (schema {version}, this app knows {SCHEMA_VERSION})",
            "update Tenant Events",
        )
    if version < SCHEMA_VERSION:
        shutil.copy2(path, f"{path}.v{version}.bak")
        data = migrated(data)
    try:
        settings = validated(data)
    except Unusable as exc:
        _move_aside(path, str(exc), notices)
        return Settings()
    if data.get("schema_version", 0) != (
        json.loads(path.read_text(encoding="utf-8")).get("schema_version", 0)
    ):
        save_settings(paths, settings)  # migrated: write the new version once (the backup is beside it)
    return settings


@contextlib.contextmanager
def held_lock(path: Path) -> Iterator[None]:
    """`path`'s read-change-write to itself: the app and a command (or two commands) each read the file, fold in
    their change and write it; without the lock a write landing between another's read and write was lost. An
    exclusive flock on a companion file, so it ends with its process however the process ends."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        os.fchmod(lock.fileno(), 0o600)
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        yield


def save_settings(paths: AppPaths, settings: Settings) -> os.stat_result:
    """Atomic replace: temp file in the same dir (0600), fsync, rename, fsync the dir. Returns the written
    file's status (see `write_private`)."""
    path = paths.settings_file
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return write_private(path, settings.model_dump_json(indent=2).encode("utf-8"))


def write_private(path: Path, payload: bytes) -> os.stat_result:
    """Atomic replace of a file readable by the user only: temp file in the same dir (0600), fsync, rename,
    fsync the dir. Returns the status of the file this call wrote, taken before the rename: by the time the
    call returns another process may have replaced it, and a stat of the path would take theirs for ours."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
            written = os.fstat(f.fileno())
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
    return written
