"""Qt-free logic behind the window: the paged snapshot of the table, off-thread aggregates, tenant status lines,
what is unseen, what an update changed, dashboard links, export, zoom."""
