"""Which tenant databases a read command works on: the one `--tenant` names, or every stored tenant."""

from __future__ import annotations

from pathlib import Path

from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths


def tenant_stores(paths: AppPaths, tenant: str | None) -> dict[str, Path]:
    """`{tenant name: database}`; one clear error when there is nothing to read or the name is unknown."""
    found = sorted(paths.databases_dir.glob("*.sqlite3")) if paths.databases_dir.exists() else []
    if tenant:
        path = paths.database_file(tenant)
        if not path.exists():
            raise ConfigError("--tenant", f"no stored events for {tenant!r} in {paths.data_dir}",
                              f"known: {', '.join(p.stem for p in found) or 'none'}")  # fmt: skip
        return {tenant: path}
    if not found:
        raise UserFixableError(f"no stored events in {paths.data_dir}", "run tenant-events stream first")
    return {p.stem: p for p in found}
