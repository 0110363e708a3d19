"""Alert rules saved to the settings file while a long-running command runs (`stream`, a relay evaluating the
team's alerts) run from the next evaluation on: the file is looked at each second (one stat) and only read.

Rules that are not valid, or a file that cannot be read, leave the rules before running; `say` gets one line
either way. The desktop app follows the whole file instead (settings/sync.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.from_settings import BadRules, rule_set
from tenant_events.paths import AppPaths
from tenant_events.settings import file_stamp, read_current
from tenant_events.settings.settings_file import Unusable
from tenant_events.tenant.link import TenantLink

FOLLOW_EVERY_S: Final = 1.0


def follow_rules(
    link: TenantLink, paths: AppPaths, alerts: AlertSettings, say: Callable[[str], None]
) -> Callable[[], Awaitable[None]]:
    """Start following (`alerts`: the rules the link runs now); returns what stops it."""
    task = asyncio.create_task(_follow(link, paths, alerts, say), name=f"follow-rules-{link.name}")

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return stop


async def _follow(
    link: TenantLink, paths: AppPaths, running: AlertSettings, say: Callable[[str], None]
) -> None:
    seen = file_stamp(paths.settings_file)
    while True:
        await asyncio.sleep(FOLLOW_EVERY_S)
        stamp = file_stamp(paths.settings_file)
        if stamp == seen:
            continue
        seen = stamp
        try:
            found = await asyncio.to_thread(read_current, paths)
            alerts = found.alerts if found is not None else AlertSettings()
            if alerts == running:
                continue  # another part of the settings changed
            link.set_alert_rules(alerts)
        except (Unusable, BadRules) as exc:
            say(
                f"the alert rules saved to the settings file were not taken in (the rules before keep running): {exc}"
            )
            continue
        running = alerts
        enabled = sum(1 for rule in rule_set(alerts).rules if rule.enabled)
        team = " (while the hub's relay evaluates for the team, its rules are the ones that run)"
        say(
            f"the alert rules changed in the settings file: {enabled} rules run from now on"
            + (team if link.team_alerts else "")
        )
