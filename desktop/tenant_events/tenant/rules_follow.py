"""Alert rules saved to the settings file while a long-running command runs (`stream`, a relay evaluating the
team's alerts) run from the next evaluation on: the file is looked at each second (one stat) and only read.

Rules that are not valid, or a file that cannot be read, leave the rules before running, with one line saying
why; a file caught in the middle of a write is read again a second later before that is said, and a file that is
not there (an editor saving by rename) changes nothing. The desktop app follows the whole file instead
(settings/sync.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.from_settings import BadRules
from tenant_events.cancelling import finish_cancelled
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import file_stamp, read_current
from tenant_events.settings.settings_file import Unusable
from tenant_events.settings.shared_file import Stamp
from tenant_events.tenant.link import TenantLink

log = logging.getLogger(__name__)

FOLLOW_EVERY_S: Final = 1.0


def settings_stamp(paths: AppPaths) -> Stamp:
    """The settings file's stamp: take it before reading the rules a link starts with, so a save in between is
    taken in."""
    return file_stamp(paths.settings_file)


def follow_rules(
    link: TenantLink, paths: AppPaths, alerts: AlertSettings, seen: Stamp, say: Callable[[str], None]
) -> Callable[[], Awaitable[None]]:
    """Start following (`alerts`: the rules the link runs now, read after `seen` was taken); returns what stops it.
    `say` gets one line for each change taken in or refused."""
    task = asyncio.create_task(_follow(link, paths, alerts, seen, say), name=f"follow-rules-{link.name}")

    async def stop() -> None:
        task.cancel()
        await finish_cancelled(task)

    return stop


async def _follow(
    link: TenantLink, paths: AppPaths, running: AlertSettings, seen: Stamp, say: Callable[[str], None]
) -> None:
    """The loop; an error of its own is logged and said, and the rules before keep running."""
    doubted: Stamp = None  # a stamp whose file could not be used once: it may have been caught mid-write
    while True:
        await asyncio.sleep(FOLLOW_EVERY_S)
        stamp = file_stamp(paths.settings_file)
        if stamp == seen or stamp is None:
            continue
        try:
            found = await asyncio.to_thread(read_current, paths)
            alerts = found.alerts if found is not None else running
            if alerts != running:
                link.set_alert_rules(alerts)
        except Unusable as exc:
            if doubted != stamp:
                doubted = stamp  # look again in a second
                continue
            seen = stamp
            _refused(say, str(exc))
            continue
        except BadRules as exc:
            seen = stamp
            _refused(say, str(exc))
            continue
        except Exception as exc:  # a bug: say it, keep the rules before, keep following
            log.exception("%s: taking in the settings file's rules failed", link.name)
            seen = stamp
            _refused(say, f"{type(exc).__name__}: {exc}")
            continue
        seen = stamp
        if alerts == running:
            continue  # another part of the settings changed
        running = alerts
        _said(say, _changed_line(link))


def _changed_line(link: TenantLink) -> str:
    count = len(link.rules.evaluator.engine.rules) if link.rules is not None else 0
    if link.team_alerts:
        return (
            f"the alert rules changed in the settings file ({count} rules); the hub's relay evaluates the team's "
            "alerts, so they do not run here"
        )
    return f"the alert rules changed in the settings file: {count} rules run from now on"


def _refused(say: Callable[[str], None], why: str) -> None:
    _said(
        say,
        f"the alert rules saved to the settings file were not taken in (the rules before keep running): {why}",
    )


def _said(say: Callable[[str], None], text: str) -> None:
    """Field names come from the file: shown with control characters escaped, wherever `say` writes."""
    try:
        say(shown(text, None))
    except Exception:  # stderr gone (a closed pipe): the rules are taken in all the same
        log.info("%s", shown(text, None))
