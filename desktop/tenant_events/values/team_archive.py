"""Where a team's shared archive is (docs/archive.md "Team archive"): what the settings, the command line, the
hub viewer and the store hand each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lake:
    """DuckLake's catalog (`postgres:` and libpq's words, never a password) and the shared folder its files are
    in."""

    catalog: str
    data_path: str
