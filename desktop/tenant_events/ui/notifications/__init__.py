"""Desktop notifications for new events."""
