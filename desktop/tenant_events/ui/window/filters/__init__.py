"""The filter bar, the query line, saved filters and the activity histogram."""
