"""Where a team's shared archive is (docs/archive.md "Team archive"): DuckLake's catalog in PostgreSQL and the
shared folder its Parquet files are in. Checked here, where the settings file and the command line meet them.

The catalog is libpq's connection words behind `postgres:` (`postgres:dbname=events host=db.example.org
user=viewer`). It never holds a password: it is written into the settings file and shows in `ps`. The password
is kept in the keyring (tenant/team_archive.py).
"""

from __future__ import annotations

import os
import re
from typing import Final

_PREFIX: Final = "postgres:"
_WORD: Final = re.compile(r"^[a-z_]+=\S+$")
_SECRET_KEYS: Final = ("password",)


def check_catalog(text: str) -> str:
    """`text` as a catalog; ValueError naming the problem (not PostgreSQL's words, a password in it)."""
    catalog = " ".join(text.split())
    words = catalog.removeprefix(_PREFIX).split()
    if not catalog.startswith(_PREFIX) or not words or not all(_WORD.match(w) for w in words):
        raise ValueError(  # (not quoted back: a URL form may hold a password)
            "is not a PostgreSQL catalog; use postgres:dbname=NAME host=HOST user=USER"
        )
    if any(w.split("=", 1)[0] in _SECRET_KEYS for w in words):
        raise ValueError("the catalog holds a password; leave it out (the keyring keeps it)")
    if not any(w.startswith("dbname=") for w in words):
        raise ValueError("names no database; add dbname=NAME")
    return catalog


def check_data_path(text: str) -> str:
    """`text` as an absolute folder path; ValueError otherwise (object storage needs an extension not bundled)."""
    path = text.strip()
    if "://" in path:
        raise ValueError(
            f"{path!r} is not a folder; the team archive's files must be on a path this computer mounts"
        )
    if not path or not os.path.isabs(os.path.expanduser(path)):
        raise ValueError(f"{path!r} is not an absolute folder path (e.g. /mnt/team/events)")
    return os.path.normpath(os.path.expanduser(path))
