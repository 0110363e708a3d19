"""The "last run died" notice: a banner in the main window, with a link to that run's crash report.

crash.RunMarker finds the runs that ended without removing their marker (killed, crashed, power lost) when the
app becomes the running instance (launch.py); DesktopApp shows them here once its window is up. The log gets
the same words, for whoever reads it later.
"""

from __future__ import annotations

import html
import logging
import time

from PySide6.QtCore import QUrl

from tenant_events.crash import DeadRun
from tenant_events.ui.look.banners import BannerArea

log = logging.getLogger(__name__)
BANNER_KEY = "crash"


def notice_text(dead_runs: list[DeadRun]) -> str:
    """Rich text for the banner: when the run started, that nothing is lost, and the report when there is one."""
    last = dead_runs[-1]
    when = f" (the run started {time.strftime('%Y-%m-%d %H:%M', time.localtime(last.started))})"
    runs = f"{len(dead_runs)} earlier runs" if len(dead_runs) > 1 else "The last run"
    text = (
        f"<b>{runs} of Tenant Events did not shut down cleanly</b>{when if last.started else ''}. "
        "Every tenant goes on from its last stored event."
    )
    if last.report is not None:
        url = QUrl.fromLocalFile(str(last.report)).toString()
        name = html.escape(last.report.name)
        text += (
            f' <a href="{html.escape(url, quote=True)}">Open the crash report</a> ({name}, in the log folder)'
        )
    return text


def show_crash_notice(banners: BannerArea, dead_runs: list[DeadRun]) -> None:
    if not dead_runs:
        return
    report = dead_runs[-1].report
    log.warning(
        "Tenant Events did not exit cleanly last time (pid %s); resuming every tenant from its stored cursor%s",
        ", ".join(str(d.pid) for d in dead_runs),
        f" (crash report: {report})" if report else "",
    )
    banners.show_banner(BANNER_KEY, "warning", notice_text(dead_runs), closable=True)
