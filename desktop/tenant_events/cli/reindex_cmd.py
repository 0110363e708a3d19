"""`tenant-events reindex`: build the entity directory (who and what events are about) and the access history
(who held which access when) again from the stored events, for every stored tenant or the one --tenant names.
Safe while the app or `stream` is writing."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.cli.stores import tenant_stores
from tenant_events.paths import AppPaths
from tenant_events.store.health import database_errors
from tenant_events.store.reindex import reindex


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "reindex",
        help="build the entity directory and access history again from the stored events",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done · 2 nothing stored · 3 unknown tenant · 5 storage",
    )
    add_data_dir(p)
    add_tenant(p, "only this tenant (default: every stored tenant)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    stores = tenant_stores(AppPaths.resolve(args.data_dir), args.tenant)
    for tenant, path in stores.items():
        started = time.monotonic()

        def progress(done: int, total: int, tenant: str = tenant) -> None:
            print(
                f"tenant-events: {tenant}: {done:,} of {total:,} stored events", file=sys.stderr, flush=True
            )

        with database_errors(path):
            total = reindex(path, progress)
        print(
            f"tenant-events: {tenant}: directory and access history rebuilt from {total:,} stored events in "
            f"{time.monotonic() - started:.1f} s",
            file=sys.stderr,
        )
    return 0
