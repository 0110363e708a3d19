"""The tray icon and its menu."""
