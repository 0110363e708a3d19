"""The Settings dialog: its tabs put together (tenants, notifications, retention, theme, and the alert pages
from ui/alerts/), so it sits above every package whose pages it holds."""
