"""Where Tenant Events keeps its files: config, data, logs, and the bundled resources.

Everything hangs off one data dir so tests (and `--data-dir`) isolate a whole profile; `TENANT_EVENTS_HOME`
does the same from the environment. The resources dir differs between a dev checkout, an installed wheel and
a PyInstaller bundle; `resource_path` hides that. A file a user names to be read (a rule file, a key file) is
read through `regular_file_bytes`: a device or a pipe in its place could be read forever.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_DIR_NAME = "tenant-events"
HOME_ENV = "TENANT_EVENTS_HOME"
# A profile's name is also its database's file name: a slug can never climb out of the data dir (no "/", no "..").
PROFILE_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def regular_file_bytes(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; ValueError saying why not (not a regular
    file — asked of the file once open, so it cannot be swapped in between —, larger, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # (opening a FIFO does not block)
    except OSError as exc:
        raise ValueError(f"cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("is not a regular file")
        try:
            raw = f.read(limit + 1)
        except OSError as exc:
            raise ValueError(f"cannot be read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise ValueError(f"is larger than {limit:,} bytes")
    return raw


def check_profile_name(name: str) -> str:
    """`name` when it can name a profile (and its database file); ValueError saying what is allowed otherwise."""
    if not PROFILE_NAME.match(name):
        raise ValueError(f"{name!r} must be 1–64 lowercase letters, digits or dashes")
    return name


@dataclass(frozen=True)
class AppPaths:
    """The directories of one installation; `root` set means everything lives under it."""

    config_dir: Path
    data_dir: Path
    log_dir: Path

    @classmethod
    def resolve(cls, data_dir: str | os.PathLike[str] | None = None) -> AppPaths:
        """`--data-dir`, then `$TENANT_EVENTS_HOME`, then the platform's per-user dirs."""
        root = data_dir or os.environ.get(HOME_ENV)
        if root:
            base = Path(root).expanduser().resolve()
            return cls(config_dir=base, data_dir=base, log_dir=base / "logs")
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_DIR_NAME, appauthor=False)),
            data_dir=Path(platformdirs.user_data_dir(APP_DIR_NAME, appauthor=False)),
            log_dir=Path(platformdirs.user_log_dir(APP_DIR_NAME, appauthor=False)),
        )

    def ensure(self) -> AppPaths:
        """Create the dirs, readable by the user only (they hold event data)."""
        for d in (self.config_dir, self.data_dir, self.log_dir):
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.json"

    @property
    def databases_dir(self) -> Path:
        return self.data_dir / "tenants"

    def database_file(self, tenant: str) -> Path:
        """One SQLite file per tenant profile."""
        return self.databases_dir / f"{tenant}.sqlite3"

    @property
    def simulator_dir(self) -> Path:
        return self.data_dir / "simulator"


# A tenant's database and the files SQLite keeps beside it (a moved-aside damaged one, `x.corrupt-….sqlite3`, too).
DATABASE_NAME = re.compile(r"\.sqlite3(?:-wal|-shm|-journal)?$")


def database_file_named(target: str | os.PathLike[str], data_dir: Path) -> Path | None:
    """The database file (or its -wal, -shm, -journal) under `data_dir` that `target` names — through `..`, a
    symlink or a hard link — else None. Looked at with `stat` only: opening such a file in a process that holds a
    connection to it would drop that process's locks (store/connections.py)."""
    real = Path(os.path.realpath(target))
    base = Path(os.path.realpath(data_dir))
    if DATABASE_NAME.search(real.name) and real.is_relative_to(base):
        return real
    try:
        st = real.stat()
    except OSError:
        return None  # a new file outside the data dir's database names
    for candidate in base.rglob("*.sqlite3*") if base.is_dir() else ():
        if not DATABASE_NAME.search(candidate.name):
            continue
        try:
            other = candidate.stat()
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            return candidate
    return None


def resource_path(*parts: str) -> Path:
    """A file under `resources/`, found in a dev checkout, an installed wheel or a frozen bundle."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    candidates = []
    if frozen_root:
        candidates.append(Path(frozen_root) / "resources")
    candidates.append(Path(__file__).resolve().parent / "resources")  # installed wheel (package data)
    candidates.append(Path(__file__).resolve().parents[2] / "resources")  # dev checkout
    for base in candidates:
        path = base.joinpath(*parts)
        if path.exists():
            return path
    return candidates[-1].joinpath(*parts)
