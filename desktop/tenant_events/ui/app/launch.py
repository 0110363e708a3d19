"""Starting the desktop app: one instance per data dir, the QApplication, the qasync loop, clean signals.

run_gui(paths, options, argv) ─▶ hand over to a running instance, or
                              └▶ this instance's run marker (crash.py: which earlier runs died)
                                 └▶ asyncio.Runner(loop_factory=qasync.QEventLoop) ▶ DesktopApp.run()
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from tenant_events.crash import RunMarker
from tenant_events.paths import AppPaths
from tenant_events.problem_sink import ProblemSink
from tenant_events.ui.app.desktop_app import AppOptions, DesktopApp

log = logging.getLogger(__name__)


def run_gui(paths: AppPaths, options: AppOptions, argv: list[str]) -> int:
    """Start the app; returns its exit code."""
    from tenant_events.ui.app.qt_logging import install_qt_message_handler
    from tenant_events.ui.app.single_instance import hand_over, server_name

    qapp = QApplication.instance() or QApplication(argv)
    assert isinstance(qapp, QApplication)
    qapp.setApplicationName("Tenant Events")
    qapp.setOrganizationName("tenant-events")
    qapp.setDesktopFileName("io.github.tenantevents.TenantEvents")
    qapp.setQuitOnLastWindowClosed(False)
    install_qt_message_handler()
    name = server_name(paths.data_dir)
    if hand_over(name, argv):  # before the run marker: a hand-over must not touch the running instance's
        asked = "to open the alert link" if len(argv) > 1 else "to show its window"
        log.info("Tenant Events is already running for %s: asked it %s", paths.data_dir, asked)
        return 0
    with RunMarker(paths.data_dir, paths.log_dir) as marker:
        options.dead_runs = marker.dead_runs
        return _run_primary(qapp, paths, options, name)


def _run_primary(qapp: QApplication, paths: AppPaths, options: AppOptions, name: str) -> int:
    import qasync  # after PySide6: qasync picks the Qt binding already imported

    from tenant_events.problem_sink import install_hooks
    from tenant_events.ui.app.single_instance import SingleInstance

    sink = ProblemSink()
    with asyncio.Runner(loop_factory=qasync.QEventLoop) as runner:
        undo = install_hooks(sink, runner.get_loop())
        instance = SingleInstance(name)
        instance.listen()
        try:

            async def main() -> int:
                app = DesktopApp(qapp, paths, options, sink)
                instance.activated.connect(app.handle_argv)
                # SIGTERM (logout, systemd, kill) and Ctrl+C quit cleanly: events committed, child stopped.
                # Python runs signal handlers only when it gets control, so a timer lets it in now and then.
                loop = asyncio.get_running_loop()
                for signum in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(signum, lambda *_a: loop.call_soon_threadsafe(app.quit))
                wake = QTimer()
                wake.start(300)
                wake.timeout.connect(lambda: None)
                try:
                    return await app.run()
                finally:
                    wake.stop()

            return runner.run(main())
        finally:
            instance.close()
            undo()
            with contextlib.suppress(Exception):
                qapp.processEvents()
