"""DuckDB never downloads: no code installs an extension, automatic installing and loading are off, and the
extensions the team archive needs (DuckLake, PostgreSQL, httpfs for S3) load from their packages' files (docs/archive.md "No downloads")."""

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
duck.load_extension("httpfs")
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
    assert {"ducklake", "httpfs", "parquet", "postgres_scanner"} <= set(eval(out[1]))
    assert out[2] == "[(1,)]"
    assert not (home / ".duckdb").exists(), "DuckDB wrote into the home folder (an extension installed?)"


_SPILL = """
import os, stat, sys
from tenant_events.store import duck
conn = duck.cursor()
conn.execute("SET memory_limit = '40MB'")
folder = conn.sql("SELECT current_setting('temp_directory')").fetchone()[0]
n = conn.sql("SELECT count(*) FROM (SELECT i, repeat('x', 120) || i AS s FROM range(1500000) t(i) ORDER BY hash(i))").fetchone()[0]
print(folder, oct(stat.S_IMODE(os.stat(folder).st_mode)), n)
"""


def test_what_duckdb_spills_goes_to_a_private_folder_of_each_process(tmp_path):
    """Two processes started in one folder sort more than their memory at once: each spills into a folder of
    its own (DuckDB's default, `.tmp` in the working directory, was one file name for both), removed at exit."""
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent)}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _SPILL], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    outs = [c.communicate(timeout=300) for c in children]
    assert all(c.returncode == 0 for c in children), [err.decode()[-2000:] for _out, err in outs]
    said = [out.decode().split() for out, _err in outs]
    assert [s[2] for s in said] == ["1500000", "1500000"]
    folders = {s[0] for s in said}
    assert len(folders) == 2 and all(not f.startswith(str(work)) for f in folders), folders
    assert {s[1] for s in said} == {"0o700"}
    assert list(work.iterdir()) == [], "DuckDB wrote into the working directory"
    assert not any(Path(f).exists() for f in folders), "a spill folder was left behind"


_WRITER = """
from tenant_events.store import duck
from tenant_events.store.archive_build import ordered_cursor
setting = "SELECT current_setting('{}')"
names = ("threads", "preserve_insertion_order", "autoinstall_known_extensions", "autoload_known_extensions",
         "temp_directory")
writer, reader = ordered_cursor(), duck.cursor()
print([writer.sql(setting.format(n)).fetchone()[0] for n in names])
print([reader.sql(setting.format(n)).fetchone()[0] for n in names])
"""


def test_the_writer_has_an_engine_of_its_own_with_one_thread_and_no_downloads(tmp_path):
    """The archive's writer (a month's files, a merge) runs on one thread of an engine of its own, in order, offline,
    spilling to a private folder: on a busy machine the shared engine's two threads took 1.5 to 3 times the CPU
    (docs/archive.md "Measured"). The readers' engine keeps its threads."""
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(PACKAGE.parent)}
    out = subprocess.run(
        [sys.executable, "-c", _WRITER], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    writer, reader = eval(out[0]), eval(out[1])
    assert writer[:4] == [1, True, False, False]
    assert reader[0] == 2 and reader[1:4] == [False, False, False]
    assert writer[4] != reader[4] and "tenant-events-spill-" in writer[4]
