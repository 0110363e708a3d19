"""The event table: its lazy model, columns, following new rows, keyboard and row menu."""
