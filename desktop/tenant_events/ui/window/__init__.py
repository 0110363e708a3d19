"""The main window: its frame, banners, status line and detail pane."""
