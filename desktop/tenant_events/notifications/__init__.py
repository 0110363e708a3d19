"""Which events become desktop notifications, and when (Qt-free: the window and the command line share it)."""
