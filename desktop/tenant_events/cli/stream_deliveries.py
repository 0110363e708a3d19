"""The delivery part of `tenant-events stream`: the alerts it stores go to the alert destinations.

stream_cmd.py calls `deliver` once the link has started; the worker stops with the stream (what is not yet
delivered stays in the database's outbox for the next start).
"""

from __future__ import annotations

import argparse
import contextlib

from tenant_events.paths import AppPaths
from tenant_events.tenant.deliveries import attach_deliveries, keyring_opener
from tenant_events.tenant.link import TenantLink


def deliver(
    args: argparse.Namespace, link: TenantLink, paths: AppPaths, stack: contextlib.AsyncExitStack
) -> None:
    """Deliver `link`'s alerts until the stream stops (not with --no-alerts)."""
    if link.rules is None:
        return
    deliveries = attach_deliveries(link, paths, keyring_opener())
    stack.push_async_callback(deliveries.stop)
