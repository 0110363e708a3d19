"""The silences of one installation, in `silences.json` beside the settings file, shared by the app, `stream`,
a relay and every command: `tenant-events silences add` in a terminal holds the app's notifications within a
second (each reader looks whether the file changed, one stat, before it decides).

    {"version": 1, "silences": [{"id", "rule", "severity", "tenant", "group", "starts_at", "ends_at",
                                 "author", "comment", "created_at"}, …]}

Changes are made under a lock file (`silences.json.lock`) and written by atomic replace, so two commands adding
at once both keep theirs. An entry that does not read as a silence is skipped with a log line, never shown; a
file that is not JSON reads as no silences and is left as it is until the next change replaces it. Silences
that ended more than a week ago are dropped at the next change.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.settings.settings_file import held_lock, write_private
from tenant_events.values.silences import Silence

log = logging.getLogger(__name__)
FILE_NAME: Final = "silences.json"
KEEP_ENDED_S: Final = 7 * 86_400.0
MAX_SILENCES: Final = 1000
MAX_BYTES: Final = 4 * 1024 * 1024
SEVERITIES: Final = ("info", "warning", "critical")


class SilenceEntry(BaseModel):
    """A silence as written in the file (and sent through a team's hub)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    rule: str | None = Field(None, min_length=1, max_length=64)
    severity: str | None = Field(None, pattern=r"^(info|warning|critical)$")
    tenant: str | None = Field(None, min_length=1, max_length=200)
    group: str | None = Field(None, min_length=1, max_length=300)
    starts_at: float
    ends_at: float
    author: str = Field(min_length=1, max_length=120)
    comment: str = Field("", max_length=500)
    created_at: float = 0.0

    def record(self) -> Silence:
        return Silence(**self.model_dump())


def entry_of(silence: Silence) -> dict[str, Any]:
    return SilenceEntry.model_validate(silence, from_attributes=True).model_dump()


def read_silences(path: Path) -> list[Silence]:
    """The silences in the file (none when it is missing or unreadable)."""
    try:
        raw = path.read_bytes()[:MAX_BYTES]
        doc = orjson.loads(raw)
    except FileNotFoundError:
        return []
    except (OSError, orjson.JSONDecodeError) as exc:
        log.warning("%s cannot be read (%s): no silences hold", path, exc)
        return []
    items = doc.get("silences") if isinstance(doc, dict) else None
    out: list[Silence] = []
    for item in items if isinstance(items, list) else []:
        try:
            out.append(SilenceEntry.model_validate(item).record())
        except ValidationError as exc:
            log.warning("a silence in %s skipped: %s", path, exc.errors()[0].get("msg", "invalid"))
    return out


def _write(path: Path, silences: list[Silence]) -> None:
    payload = orjson.dumps(
        {"version": 1, "silences": [entry_of(s) for s in silences]}, option=orjson.OPT_INDENT_2
    )
    write_private(path, payload)


class SilenceBook:
    """The installation's silences: read when the file changed, changed under its lock."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.clock = clock
        self._stamp: tuple[int, int] | None = None
        self._silences: list[Silence] = []

    @classmethod
    def of(cls, paths: AppPaths) -> SilenceBook:
        return cls(paths.config_dir / FILE_NAME)

    def _stamp_now(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def all(self) -> list[Silence]:
        """Every silence in the file, as it is now."""
        stamp = self._stamp_now()
        if stamp != self._stamp:
            self._silences = read_silences(self.path) if stamp is not None else []
            self._stamp = stamp
        return list(self._silences)

    def active(self) -> list[Silence]:
        now = self.clock()
        return [s for s in self.all() if s.active(now)]

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[Silence]]:
        with held_lock(self.path):
            current = read_silences(self.path)
            yield current
            now = self.clock()
            kept = [s for s in current if s.ends_at > now - KEEP_ENDED_S]
            _write(self.path, kept)
        self._stamp = None

    def add(self, silence: Silence) -> Silence:
        """Keep `silence` (one with the same id takes its place)."""
        with self._locked() as current:
            current[:] = [s for s in current if s.id != silence.id]
            if len(current) >= MAX_SILENCES:
                raise ConfigError(
                    "silences", f"{MAX_SILENCES} silences are kept at most: remove ended ones first"
                )
            current.append(silence)
        return silence

    def remove(self, silence_id: str) -> Silence:
        """Lift a silence now (it stays listed as ended); ConfigError when there is none with that id."""
        with self._locked() as current:
            found = next((s for s in current if s.id == silence_id), None)
            if found is None:
                known = ", ".join(s.id for s in current if s.active(self.clock())) or "none active"
                raise ConfigError("silences remove", f"no silence {silence_id!r}", f"known: {known}")
            now = self.clock()
            lifted = Silence(**{**entry_of(found), "ends_at": min(found.ends_at, now)})
            current[:] = [lifted if s.id == silence_id else s for s in current]
        return lifted


def new_silence(
    *,
    duration_s: float,
    author: str,
    comment: str = "",
    rule: str | None = None,
    severity: str | None = None,
    tenant: str | None = None,
    group: str | None = None,
    now: float | None = None,
) -> Silence:
    """A silence starting now for `duration_s`, validated (ConfigError naming the field)."""
    at = time.time() if now is None else now
    if not 0 < duration_s <= 366 * 86_400:
        raise ConfigError("silence", "lasts between a second and a year")
    entry = {
        "id": secrets.token_hex(4),
        "rule": rule,
        "severity": severity,
        "tenant": tenant,
        "group": group,
        "starts_at": at,
        "ends_at": at + duration_s,
        "author": author,
        "comment": comment,
        "created_at": at,
    }
    try:
        return SilenceEntry.model_validate(entry).record()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ConfigError(f"silence {where}", str(first.get("msg", "invalid"))) from None
