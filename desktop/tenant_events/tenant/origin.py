"""Which tenant a database holds: a profile name keeps its tenant for as long as its database exists.

A database's events and cursor are one tenant's. Beside `tenants/<name>.sqlite3` the link keeps
`<name>.origin.json`: the stream URL it was filled from. A profile (or a bare `--base-url`) that now streams from
elsewhere under the same name is refused with one line, before anything is saved or sent, instead of appending
another tenant's events to it from the old cursor. A database from before this file existed takes the tenant it
is next opened with.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tenant_events.errors import ConfigError, StorageError
from tenant_events.paths import AppPaths
from tenant_events.url_forms import normalize_url


def origin_file(paths: AppPaths, name: str) -> Path:
    return paths.databases_dir / f"{name}.origin.json"


def recorded_origin(paths: AppPaths, name: str) -> str | None:
    """The stream URL `name`'s database was filled from; None when it has no database or no record."""
    if not paths.database_file(name).exists():
        return None
    try:
        data = json.loads(origin_file(paths, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("base_url") if isinstance(data, dict) else None
    return url if isinstance(url, str) else None


def check_origin(paths: AppPaths, name: str, base_url: str, field: str = "tenant") -> None:
    """ConfigError naming `field` when `name`'s database holds another tenant's events."""
    held = recorded_origin(paths, name)
    if held is not None and normalize_url(held) != normalize_url(base_url):
        raise ConfigError(
            field,
            f"the database of {name!r} ({paths.database_file(name)}) holds the events of {held}, not of "
            f"{normalize_url(base_url)}",
            "a profile keeps its tenant: give this tenant another name, or move that database away",
        )


def claim_origin(paths: AppPaths, name: str, base_url: str) -> None:
    """Check, then record `base_url` as the tenant of `name`'s database (before it is first written)."""
    check_origin(paths, name, base_url)
    if recorded_origin(paths, name) is None:
        _record(paths, name, base_url)


def record_origin(paths: AppPaths, name: str, base_url: str) -> None:
    """Record `base_url` as the tenant of `name`'s database, replacing any record: for a database that has just
    been opened (created) after `check_origin` found no tenant recorded for it. Nothing is written for a database
    that could not be opened."""
    _record(paths, name, base_url)


def move_origin(paths: AppPaths, name: str, base_url: str) -> None:
    """The same tenant at a new address (the bundled demo tenant gets a new port each start)."""
    if paths.database_file(name).exists():
        _record(paths, name, base_url)


def _record(paths: AppPaths, name: str, base_url: str) -> None:
    target = origin_file(paths, name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # A scratch name of its own: two processes of one profile (two `stream`s) may record at once.
        fd, scratch = tempfile.mkstemp(
            prefix=f".{target.name}-", suffix=".tmp", dir=target.parent
        )  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps({"base_url": normalize_url(base_url)}) + "\n")
            os.replace(scratch, target)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StorageError(f"cannot write {target}: {exc.strerror or exc}", "check the data dir") from exc
