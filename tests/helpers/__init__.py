"""Shared test helpers; fixtures_*.py modules here are loaded as pytest plugins by tests/conftest.py."""
