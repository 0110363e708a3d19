"""Nothing but SQLite opens a database file, its -wal or its -shm: a check over the whole package, like the layer
contracts.

POSIX advisory locks belong to the process, and closing any descriptor of a file drops every lock the process
holds on it: one plain `open()` of the database beside a live connection (a header check, a size, a copy, a
backup) lets the next process that closes a connection delete the write-ahead log under the running writer
(tests/store/test_locks_kept.py shows it). So every place in the package that opens a file by path with plain
I/O — `open`, `os.open`, `io.open`, `Path.open`/`read_*`/`write_*`, `shutil`'s copies and moves — is listed
here with what it opens; `store/`, where the database files live, has none but the one that only ever creates a
new file. A new site fails this test until it is named below, so whoever adds it says why it is not a database.
`stat`, `exists`, `chmod` and `rename` take no descriptor and are free to use.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "desktop" / "tenant_events"

# "module path :: enclosing function": what that site opens (never a database file or its -wal / -shm).
ALLOWED: dict[str, str] = {
    "store/schema.py::make_private": "creates the database file 0600 with O_EXCL: an existing file is never opened",
    "store/archive_build.py::_scratch": "a month's rows as JSON and its field rows and tokens as JSON lines in a "
    "scratch folder inside <name>.archive/",
    "store/archive_build.py::synced_rename": "a Parquet file just written in <name>.archive/, to fsync it",
    "store/archive_build.py::write_rows": "settled rows (access spans, the directory's past) as JSON lines in a "
    "scratch folder inside <name>.archive/",
    "store/archive_build.py::sync_folder": "the <name>.archive/ folder itself, to fsync its renames",
    "spill_folder.py::make_spill_folder": "the DuckDB spill folder just made (a directory), to lock it",
    "spill_folder.py::_remove_if_unheld": "a spill folder in the temporary directory (a directory), to try its lock",
    "auth/stored_sign_in.py::_open_lock_file": "the sign-in's refresh lock file",
    "autostart.py::set_enabled": "the desktop's autostart entry",
    "crash.py::RunMarker.__enter__": "the running app's marker file in logs/",
    "crash.py::_read_marker": "a marker file in logs/",
    "crash.py::_start_id": "/proc/PID/stat",
    "crash.py::enable_fatal_log": "logs/fatal.log for faulthandler",
    "crash.py::write_report": "the crash report being written",
    "logs.py::PrivateRotatingFileHandler._open": "the log file",
    "settings/settings_file.py::read_document": "the settings file",
    "settings/settings_file.py::load_settings": "the settings file and its backup before a migration",
    "settings/settings_file.py::write_private": "the settings or silences file's directory, to fsync the rename",
    "settings/silences_file.py::read_silences": "the silences file (silences.json beside the settings)",
    "settings/settings_file.py::held_lock": "the settings or silences file's lock file (<file>.lock beside it)",
    "tenant/origin.py::recorded_origin": "<name>.origin.json beside the database",
    "paths.py::regular_file_bytes": "a file the user names, read only when it is a regular file: a hub secret file, "
    "the Sigma files `rules import` reads, the rules file `rules test` is given",
    "cli/output_file.py::quiet_stdout": "os.devnull",
    "cli/timeline_cmd.py::run": "os.devnull",
    "cli/timeline_cmd.py::_write": "the --jsonl file the user names",
    "cli/alerts_cmd.py::run": "the --jsonl file the user names",
    "cli/stream_cmd.py::_open_output": "the --jsonl file the user names",
    "cli/stream_alerts.py::_AlertSink.__init__": "the --alerts-jsonl file the user names",
    "cli/output_file.py::_write_file": "the export or access target the user names (a FIFO or a device)",
    "ui/window/access/report_writer.py::write_report": "a temp file beside the access review the user picks",
    "ui/window/access/report_writer.py::write_report.csv_file": "a temp file beside the review's CSV",
    "ui/app/hub_connect.py::read_secret": "the hub secret file the user picks",
    "ui/app/route_watch.py::has_default_route": "/proc/net/route",
    "ui/source_scan.py::uses_pyside": "the Python source of an imported module",
    "simulator/keys.py::load_or_create_key": "the simulator's signing key",
    "simulator/scenarios.py::load_scenario": "a scenario file the simulator is given",
}

PLAIN_CALLS = {"open", "os.open", "io.open", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move"}
PLAIN_CALLS |= {"shutil.copytree", "shutil.copyfileobj"}
PATH_METHODS = {"read_bytes", "read_text", "write_bytes", "write_text"}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func)}()"
    return "?"


def _opens_by_path(call: ast.Call) -> bool:
    name = _dotted(call.func)
    if name in PLAIN_CALLS:
        return True
    if not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr in PATH_METHODS:
        return True
    if call.func.attr != "open":
        return False
    receiver = call.func.value
    # `Path(...).open(...)`, `path.open("rb")`: an open with a mode or an encoding. Not a file: a class's own
    # `open()` constructor (`TriageBoard.open`), a dialog's `open()`, `webbrowser.open(url)`.
    if isinstance(receiver, ast.Name) and (receiver.id[:1].isupper() or receiver.id == "webbrowser"):
        return False
    if any(k.arg in {"mode", "encoding", "buffering"} for k in call.keywords):
        return True
    return any(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args[:1]) or (
        isinstance(receiver, ast.Call) and _dotted(receiver.func) in {"Path", "pathlib.Path"}
    )


def plain_io_sites() -> dict[str, list[int]]:
    """Every call in the package that opens a file by path with plain I/O, by module and enclosing function."""
    sites: dict[str, list[int]] = {}

    def walk(node: ast.AST, where: list[str], module: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = [*where, child.name]
            if isinstance(child, ast.Call) and _opens_by_path(child):
                key = f"{module}::{'.'.join(where) or '<module>'}"
                sites.setdefault(key, []).append(child.lineno)
            walk(child, inner, module)

    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        walk(ast.parse(path.read_text(encoding="utf-8")), [], module)
    return sites


def test_no_plain_io_opens_a_database_file():
    found = plain_io_sites()
    new = {site: lines for site, lines in found.items() if site not in ALLOWED}
    assert not new, (
        "plain file I/O in the package that this guard does not know; if it can never be a database file, its "
        "-wal or its -shm, name it in ALLOWED with what it opens, else open the database through SQLite: "
        + ", ".join(f"{site} (line {', '.join(map(str, lines))})" for site, lines in sorted(new.items()))
    )


def test_every_allowed_site_still_exists():
    stale = set(ALLOWED) - set(plain_io_sites())
    assert not stale, f"ALLOWED names sites that no longer open anything: {sorted(stale)}"


# The store's own plain I/O: creating the database file, and the archive's Parquet and scratch files in the
# `<name>.archive/` folder beside it (whose names never end in .sqlite3, -wal or -shm).
STORE_SITES = {
    "store/schema.py::make_private",
    "store/archive_build.py::_scratch",
    "store/archive_build.py::synced_rename",
    "store/archive_build.py::write_rows",
    "store/archive_build.py::sync_folder",
}


def test_store_opens_nothing_but_through_sqlite():
    in_store = {site for site in plain_io_sites() if site.startswith("store/")}
    assert in_store == STORE_SITES, sorted(in_store ^ STORE_SITES)


def test_the_guard_sees_the_ways_a_file_is_opened(tmp_path):
    """Each form the guard must catch, planted in a copy of a store module, is found."""
    planted = {
        "open": 'open(self.path, "rb").close()',
        "os.open": "os.close(os.open(self.path, os.O_RDONLY))",
        "Path.open": 'self.path.open("rb").close()',
        "read_bytes": "self.path.read_bytes()",
        "shutil": "shutil.copy2(self.path, backup)",
        "Path(...).open": "Path(name).open().close()",
    }
    for what, line in planted.items():
        tree = ast.parse(f"def check(self, backup, name):\n    {line}\n")
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _opens_by_path(n)]
        assert calls, f"the guard misses {what}: {line}"
    for harmless in (
        "dialog.open()",
        "TriageBoard.open(js, names)",
        "webbrowser.open(url)",
        "self.path.stat()",
    ):
        tree = ast.parse(harmless)
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _opens_by_path(n)], harmless
