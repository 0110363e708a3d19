"""Headless command line over the same engine, store and sign-in as the desktop app."""
