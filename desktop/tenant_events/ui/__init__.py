"""The desktop app: the only package that imports PySide6 and qasync."""

from tenant_events.ui.source_scan import scan_without_keeping

scan_without_keeping()  # before the app's own imports: each would otherwise leave its source in memory
