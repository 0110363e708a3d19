"""The desktop app: the only package that imports PySide6 and qasync."""
