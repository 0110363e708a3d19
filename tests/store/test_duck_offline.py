"""DuckDB never downloads: no code installs an extension, automatic installing and loading are off, and the
extensions the team archive needs load from their packages' files (docs/archive.md "No downloads")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "desktop" / "tenant_events"


def test_no_code_installs_an_extension():
    found = [
        f"{p.relative_to(PACKAGE)}:{n}"
        for p in PACKAGE.rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if (re.search(r"\bINSTALL\b", line) and "never INSTALL" not in line) or "install_extension" in line
    ]
    assert found == []


_CHILD = """
from tenant_events.store import duck
duck.load_extension("postgres_scanner")
duck.load_extension("ducklake")
conn = duck.cursor()
print(conn.sql("SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')").fetchall())
print(sorted(r[0] for r in conn.sql("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()))
conn.execute("ATTACH 'ducklake:{lake}/catalog.ducklake' AS lake (DATA_PATH '{lake}/files')")
conn.execute("CREATE TABLE lake.t AS SELECT 1 AS x")
print(conn.sql("SELECT x FROM lake.t").fetchall())
"""


def test_the_extensions_load_from_their_packages_with_nothing_written_to_the_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(lake=tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "[(False, False)]"
    assert {"ducklake", "parquet", "postgres_scanner"} <= set(eval(out[1]))
    assert out[2] == "[(1,)]"
    assert not (home / ".duckdb").exists(), "DuckDB wrote into the home folder (an extension installed?)"
