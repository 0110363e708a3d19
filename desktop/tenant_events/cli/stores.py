"""Which tenant databases a read command works on: the one `--tenant` names, or every stored tenant.

Files moved aside as damaged (`NAME.corrupt-<time>.sqlite3`) are not tenants. Every chosen file is checked before
it is read, so a damaged one is one line naming it (exit 5) and is left exactly as it was.
"""

from __future__ import annotations

from pathlib import Path

from tenant_events.errors import ConfigError, StorageError, UserFixableError
from tenant_events.paths import AppPaths, check_profile_name
from tenant_events.tenant.database import check_readable


def stored_databases(paths: AppPaths) -> list[Path]:
    """The tenants' database files, by name; one line when the data dir cannot be read."""
    if paths.data_dir.exists() and not paths.data_dir.is_dir():
        raise StorageError(
            f"cannot use the data dir {paths.data_dir}: it is a file, not a directory",
            "use another --data-dir",
        )
    try:
        found = sorted(paths.databases_dir.glob("*.sqlite3")) if paths.databases_dir.exists() else []
    except PermissionError:
        raise cannot_read(paths) from None
    return [p for p in found if _is_tenant(p.stem)]


def cannot_read(paths: AppPaths) -> UserFixableError:
    return StorageError(
        f"cannot read the data dir {paths.data_dir}: permission denied",
        "check who owns it (ls -ld), or use another --data-dir",
    )


def _is_tenant(stem: str) -> bool:
    try:
        check_profile_name(stem)
    except ValueError:
        return False
    return True


def known_database(paths: AppPaths, tenant: str) -> Path:
    """`--tenant NAME`'s database, checked; ConfigError naming the stored ones when there is none."""
    path = paths.database_file(tenant)
    try:
        exists = path.exists() or path.is_symlink()
    except PermissionError:
        raise cannot_read(paths) from None
    if not exists:
        known = ", ".join(p.stem for p in stored_databases(paths)) or "none"
        raise ConfigError(
            "--tenant", f"no stored events for {tenant!r} in {paths.data_dir}", f"known: {known}"
        )
    check_readable(path)
    return path


def tenant_stores(paths: AppPaths, tenant: str | None) -> dict[str, Path]:
    """`{tenant name: database}`; one clear error when there is nothing to read or the name is unknown."""
    if tenant:
        return {tenant: known_database(paths, tenant)}
    found = stored_databases(paths)
    if not found:
        raise UserFixableError(f"no stored events in {paths.data_dir}", "run tenant-events stream first")
    for path in found:
        check_readable(path)
    return {p.stem: p for p in found}
