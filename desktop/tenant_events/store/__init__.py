"""SQLite store: schema and migrations, event insert and query, cursor, gaps, rejected messages."""
