"""What the user sees as alerts: the inbox, the unread count, the rules and destinations pages of Settings, quiet
and working hours, the desktop notifications and the tray's alert menu."""
