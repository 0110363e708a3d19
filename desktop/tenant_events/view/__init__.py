"""Qt-free logic behind the window: what is unseen, what an update changed, dashboard links, export, zoom."""
