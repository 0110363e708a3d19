"""The alerts inbox, the rules editor and the alert runner each tenant of the app runs."""
