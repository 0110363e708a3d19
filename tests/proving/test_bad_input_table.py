"""The bad-input table: every command × every family of bad input gives one line on stderr, a specific exit code,
and changes nothing on disk — except a damaged file that `stream` moves aside on purpose, and then it says where.
No row may end in "unexpected error" (a crash report).

Families: a damaged event database (garbage, truncated, header only, bit-flipped, empty, another program's,
a directory); a data dir the user cannot use (a file, another user's); queries past their bound; outputs that are
not regular files; profile names that climb out of the data dir; non-finite and out-of-range numbers; malformed
URLs; a settings file nested past any sense.

Rows run the real `tenant-events` entry point in this process (fast); rows that need a process of their own
(another user's data dir, a full disk behind stdout, the desktop app) run as subprocesses, all at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import cli_here
from helpers.events_factory import row as event_row
from tenant_events.store import Batch, StoreWriter

pytestmark = (
    pytest.mark.expect_warning_logs
)  # the store logs what it moves aside; rows check what the user sees

TE = [sys.executable, "-m", "tenant_events"]
DEAD_URL = (
    "http://127.0.0.1:9/api/v2"  # nothing listens on port 9: stream gives up after --unreachable-timeout
)
SETPRIV = shutil.which("setpriv")
# Root reads anything; without these capabilities it is held to file modes like any other user.
AS_ANOTHER_USER = [
    SETPRIV or "setpriv",
    "--bounding-set=-dac_override,-dac_read_search,-fowner",
    "--inh-caps=-dac_override,-dac_read_search,-fowner",
]


# -- the data dirs -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def good_database(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real tenant database of 300 events, in one file (checkpointed), as bytes to damage."""
    path = tmp_path_factory.mktemp("good") / "acme.sqlite3"
    writer = StoreWriter(path)
    try:
        rows = [event_row(i) for i in range(300)]
        writer.commit_sync(Batch(events=rows, cursor=rows[-1].offset))
    finally:
        writer.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    return path.read_bytes()


def _damage(kind: str, good: bytes, path: Path) -> None:
    if kind == "garbage":
        path.write_bytes(bytes((i * 7919) % 251 for i in range(20_000)))
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 3])
    elif kind == "header-only":
        path.write_bytes(good[:100])
    elif kind == "bit-flipped":
        flipped = bytearray(good)
        for at in range(4096 + 100, len(flipped), 997):
            flipped[at] ^= 0xFF
        path.write_bytes(bytes(flipped))
    elif kind == "zero-length":
        path.write_bytes(b"")
    elif kind == "foreign":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO messages (body) VALUES ('not yours')")
        conn.commit()
        conn.close()
    elif kind == "directory":
        path.mkdir()
        (path / "keep.txt").write_text("mine")
    else:
        raise AssertionError(kind)


DAMAGE = ("garbage", "truncated", "header-only", "bit-flipped", "zero-length", "foreign", "directory")


def snapshot(root: Path) -> dict[str, str]:
    """Every path under `root` (the logs dir aside: logging is not a change to the user's data) → its content."""
    out: dict[str, str] = {}
    if not root.exists():
        return out
    if not root.is_dir():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == "logs" or rel.startswith("logs/"):
            continue
        mode = path.lstat().st_mode
        if stat.S_ISREG(mode):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir" if stat.S_ISDIR(mode) else oct(stat.S_IFMT(mode))
    return out


# -- running a command ------------------------------------------------------------------------------------------
@dataclass
class Result:
    code: int
    out: str
    err: str


def run_here(argv: list[str], env: dict[str, str] | None = None) -> Result:
    done = cli_here.run_here(argv, env)
    return Result(done.returncode, done.stdout, done.stderr)


def run_apart(argv: list[str], *, prefix: list[str] | None = None, stdout: Path | None = None) -> Result:
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "not-used", "QT_QPA_PLATFORM": "offscreen"}
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(stdout.open("w")) if stdout else subprocess.PIPE
        proc = subprocess.run(
            [*(prefix or []), *TE, *argv],
            stdout=target,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    return Result(proc.returncode, proc.stdout or "", proc.stderr)


def one_line(result: Result, code: int, *needles: str) -> str:
    """The row's verdict: exactly one line on stderr, the exit code, the words that make it specific."""
    assert "unexpected error" not in result.err and "Traceback" not in result.err, result.err
    assert result.err.count("\n") == 1 and result.err.endswith("\n"), result.err
    assert result.code == code, (result.code, result.err)
    line = result.err.strip()
    assert line.startswith("tenant-events"), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def no_crash_report(data: Path) -> None:
    assert not list(data.glob("logs/crash-*")), "a bad input is not a crash"


# -- 1. a damaged event database × every command that reads one -------------------------------------------------
READERS: dict[str, list[str]] = {
    "export": ["export", "--jsonl", "-"],
    "export-query": ["export", "--csv", "-", "--query", "type:user.*"],
    "alerts": ["alerts"],
    "alerts-mark-read": ["alerts", "--mark-read", "--tenant", "acme"],
    "timeline": ["timeline", "user:auth0|1"],
    "access": ["access", "--csv", "-"],
    "access-diff": ["access", "diff", "--from", "2026-01-01T00:00:00Z", "--jsonl", "-"],
    "reindex": ["reindex"],
    "rules-try": ["rules", "--try", "off-hours"],
}
WHAT = {
    "garbage": "is not a SQLite database",
    "truncated": "is damaged",
    "header-only": "is damaged",
    "bit-flipped": "is damaged",
    "zero-length": "is empty (0 bytes)",
    "foreign": "is not a Tenant Events database (it holds messages)",
    "directory": "is a directory",
}


@pytest.mark.parametrize("kind", DAMAGE)
@pytest.mark.parametrize("command", READERS)
def test_damaged_database(tmp_path, good_database, command, kind):
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    db = data / "tenants" / "acme.sqlite3"
    _damage(kind, good_database, db)
    before = snapshot(data)
    result = run_here([READERS[command][0], "--data-dir", str(data), *READERS[command][1:]])
    one_line(result, 5, str(db), WHAT[kind])
    assert result.out == ""
    assert snapshot(data) == before  # not repaired, not moved, not written into: the user decides
    no_crash_report(data)


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_database_under_stream_is_moved_aside_and_said_where(tmp_path, good_database, kind):
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    db = data / "tenants" / "acme.sqlite3"
    _damage(kind, good_database, db)
    before = snapshot(data)
    result = run_here(
        [
            "stream",
            "--data-dir",
            str(data),
            "--base-url",
            DEAD_URL,
            "--name",
            "acme",
            "--unreachable-timeout",
            "0.3",
        ],
        {"TENANT_EVENTS_ACCESS_TOKEN": "not-used"},
    )
    assert "unexpected error" not in result.err and "Traceback" not in result.err, result.err
    after = snapshot(data)
    if kind == "directory":  # nothing to move: SQLite cannot open it, and a directory is not ours to move
        one_line(result, 5, str(db), "cannot open")
        assert after == before
        return
    if kind == "zero-length":  # an empty file is an empty SQLite database: it simply becomes the new one
        assert result.code == 6 and "moved" not in result.err, result.err
        return
    told = [line for line in result.err.splitlines() if "moved to" in line]
    assert len(told) == 1, result.err
    moved = [rel for rel in after if ".corrupt-" in rel and rel.endswith(".sqlite3")]
    assert len(moved) == 1, after
    assert str(db) in told[0] and str(data / moved[0]) in told[0], told[0]
    assert after[moved[0]] == before["tenants/acme.sqlite3"]  # kept byte for byte
    assert result.code == 6  # then it went on, into a new database, until the dead URL made it give up
    no_crash_report(data)


DEEP = {  # damage that only shows when the events themselves are read, past the checks made before reading
    "export-file": ["export", "--jsonl", "{out}"],
    "export-stdout": ["export", "--csv", "-"],
    "timeline": ["timeline", "user:auth0|250"],
    "access": ["access", "--jsonl", "-"],
    "reindex": ["reindex"],
}


@pytest.mark.parametrize("command", DEEP)
def test_damage_found_mid_read(tmp_path, good_database, command):
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    db = data / "tenants" / "acme.sqlite3"
    flipped = bytearray(good_database)
    for at in range(len(flipped) // 2, len(flipped), 1499):  # the schema and the first pages are intact
        flipped[at] ^= 0xFF
    db.write_bytes(bytes(flipped))
    out = tmp_path / "out.jsonl"
    before = snapshot(data)
    words = [w.replace("{out}", str(out)) for w in DEEP[command]]
    result = run_here([words[0], "--data-dir", str(data), *words[1:]])
    one_line(result, 5, str(db), "is damaged")
    assert snapshot(data) == before and not out.exists()  # no half export left behind
    assert not list(tmp_path.glob(".out.jsonl.*"))
    no_crash_report(data)


@pytest.mark.parametrize("command", ["export-file", "export-stdout"])
def test_a_stored_text_that_is_not_utf8_is_damage(tmp_path, good_database, command):
    """A flipped byte inside an event's text (not in SQLite's own structure) is damage, named without quoting it."""
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    db = data / "tenants" / "acme.sqlite3"
    db.write_bytes(good_database)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE events SET raw = CAST(X'7b22ff6f6666736574223a317d' AS TEXT) WHERE seq = 40")
    conn.commit()
    conn.close()
    before = snapshot(data)
    words = {
        "export-file": ["export", "--jsonl", str(tmp_path / "out.jsonl")],
        "export-stdout": ["export", "--csv", "-"],
    }
    result = run_here([command.split("-")[0], "--data-dir", str(data), *words[command][1:]])
    one_line(result, 5, str(db), "is damaged (a stored text is not valid UTF-8)")
    assert snapshot(data) == before
    no_crash_report(data)


# -- 2. a data dir the user cannot use × every command ----------------------------------------------------------
EVERY_COMMAND: dict[str, list[str]] = {
    **{
        k: v
        for k, v in READERS.items()
        if k in ("export", "alerts", "timeline", "access", "access-diff", "reindex", "rules-try")
    },
    "stream": ["stream", "--base-url", DEAD_URL, "--unreachable-timeout", "0.3"],
    "relay": ["relay", "--base-url", DEAD_URL, "--hub", "nats://127.0.0.1:9"],
    "login": [
        "login",
        "--auth-url",
        "http://127.0.0.1:9",
        "--client-id",
        "abc",
        "--no-browser",
        "--timeout",
        "1",
    ],
    "logout": ["logout"],
    "gui": ["gui"],
}


def _as_argv(command: str, data: Path) -> list[str]:
    words = EVERY_COMMAND[command]
    return [words[0], "--data-dir", str(data), *words[1:]]


@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_data_dir_is_a_file(tmp_path, command):
    data = tmp_path / "data"
    data.write_text("a file where the data dir should be")
    before = snapshot(data)
    run = run_apart if command == "gui" else run_here
    result = run(
        _as_argv(command, data), **({} if command == "gui" else {"env": {"TENANT_EVENTS_ACCESS_TOKEN": "x"}})
    )
    one_line(result, 5, str(data))
    assert snapshot(data) == before


def test_simulator_data_dir_is_a_file(tmp_path):
    data = tmp_path / "sim"
    data.write_text("a file where the simulator's data dir should be")
    one_line(run_here(["simulator", "--data-dir", str(data)]), 5, str(data), "use another --data-dir")
    assert data.read_text() == "a file where the simulator's data dir should be"


@pytest.fixture(scope="module")
def another_users_data_dir(tmp_path_factory, good_database) -> tuple[Path, dict[str, Result], dict[str, str]]:
    """A data dir owned by another user (mode 0700), every command run against it at once, as a user who is not
    its owner (root without the capabilities that pass over file modes)."""
    if SETPRIV is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to act as a user the data dir does not belong to")
    base = tmp_path_factory.mktemp("others")
    os.chmod(base, 0o755)
    data = base / "data"
    (data / "tenants").mkdir(parents=True)
    (data / "tenants" / "acme.sqlite3").write_bytes(good_database)
    for path in (data, *data.rglob("*")):
        os.chown(path, 65534, 65534)
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
    before = snapshot(data)
    # One process for every command (one interpreter start, not ten): each runs the real entry point in turn.
    argvs = {c: _as_argv(c, data) for c in EVERY_COMMAND}
    env = {**os.environ, "TENANT_EVENTS_ACCESS_TOKEN": "not-used", "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [*AS_ANOTHER_USER, sys.executable, "-c", EACH_IN_TURN, json.dumps(list(argvs.values()))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    return data, {c: Result(*r) for c, r in zip(argvs, done, strict=True)}, before


EACH_IN_TURN = """
import contextlib, io, json, sys
from tenant_events.cli.main import main
results = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_data_dir_of_another_user(another_users_data_dir, command):
    data, results, before = another_users_data_dir
    one_line(results[command], 5, str(data), "permission denied")
    assert snapshot(data) == before
    no_crash_report(data)


# -- 3. queries past their bound --------------------------------------------------------------------------------
QUERIES = {
    "1000-terms": " ".join(["user:ada"] * 1000),
    "400-parentheses": "(" * 400 + "ada" + ")" * 400,
    "400-negations": "-" * 400 + "ada",
    "300-NOT": "NOT " * 300 + "ada",
    "100k-characters": "a" * 100_000,
}


@pytest.fixture
def stored(tmp_path, good_database) -> Path:
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    (data / "tenants" / "acme.sqlite3").write_bytes(good_database)
    return data


@pytest.mark.parametrize("query", QUERIES)
def test_query_past_its_bound(stored, query):
    before = snapshot(stored)
    result = run_here(["export", "--data-dir", str(stored), "--jsonl", "-", f"--query={QUERIES[query]}"])
    one_line(result, 2, "--query", "at characters", "at most")
    assert result.out == "" and snapshot(stored) == before


# -- 4. outputs that are not regular files ----------------------------------------------------------------------
def test_export_into_a_fifo_writes_through(stored, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run_here(["export", "--data-dir", str(stored), "--jsonl", str(fifo)])
    reader.join(30)
    one_line(result, 0, "exported 300 events")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the FIFO, not a file in its place
    assert got and got[0].count(b"\n") == 300


def test_export_through_a_symlink_keeps_the_link(stored, tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    result = run_here(["export", "--data-dir", str(stored), "--jsonl", str(link)])
    one_line(result, 0, "exported 300 events")
    assert link.is_symlink() and os.readlink(link) == target.name
    assert target.read_text().count("\n") == 300


@pytest.fixture
def full_device(tmp_path) -> Path:
    """A device that is always full (/dev/full's numbers), of this test's own: a regression that replaced the
    device with a file would replace this node, never the machine's /dev/full (as root it could)."""
    node = tmp_path / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 7))
        os.close(os.open(node, os.O_WRONLY))  # a nodev mount refuses this
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return node


def test_export_into_a_full_device_is_one_line(stored, full_device):
    result = run_here(["export", "--data-dir", str(stored), "--jsonl", str(full_device)])
    one_line(result, 5, str(full_device), "the disk is full")
    assert stat.S_ISCHR(full_device.lstat().st_mode)  # written to, never replaced


@pytest.mark.parametrize("command", ["export", "timeline", "rules"])
def test_stdout_on_a_full_disk_is_one_line(stored, full_device, command):
    argv = {
        "export": ["export", "--data-dir", str(stored), "--jsonl", "-"],
        "timeline": ["timeline", "--data-dir", str(stored), "user:auth0|1"],
        "rules": ["rules", "--data-dir", str(stored)],
    }[command]
    before = snapshot(stored)
    result = run_apart(argv, stdout=full_device)
    one_line(result, 5, "standard output", "the disk is full")
    assert snapshot(stored) == before


@pytest.mark.parametrize("kind", ["directory", "missing-dir"])
def test_export_to_a_path_that_cannot_be_a_file(stored, tmp_path, kind):
    target = tmp_path if kind == "directory" else tmp_path / "no" / "such.jsonl"
    result = run_here(["export", "--data-dir", str(stored), "--jsonl", str(target)])
    one_line(result, 2, str(target))


# -- 5. profile names that climb out of the data dir ------------------------------------------------------------
NAMES = {
    "stream --name": ["stream", "--base-url", DEAD_URL, "--name", "../../escape"],
    "stream --tenant": ["stream", "--tenant", "../escape"],
    "relay --name": [
        "relay",
        "--base-url",
        DEAD_URL,
        "--hub",
        "nats://127.0.0.1:9",
        "--name",
        "../../escape",
    ],
    "login --name": [
        "login",
        "--auth-url",
        "http://127.0.0.1:9",
        "--client-id",
        "abc",
        "--name",
        "../escape",
    ],
    "login --tenant": ["login", "--tenant", "a/b"],
    "logout --tenant": ["logout", "--tenant", ".."],
    "export --tenant": ["export", "--tenant", "../../etc/passwd", "--jsonl", "-"],
    "alerts --tenant": ["alerts", "--tenant", "../acme"],
    "timeline --tenant": ["timeline", "user:1", "--tenant", "/abs"],
    "access --tenant": ["access", "--tenant", "../acme"],
    "access diff --tenant": ["access", "diff", "--from", "1d", "--tenant", "a/b"],
    "reindex --tenant": ["reindex", "--tenant", "ACME"],
    "rules --tenant": ["rules", "--try", "off-hours", "--tenant", "acme/../acme"],
}


@pytest.mark.parametrize("case", NAMES)
def test_profile_name_outside_the_data_dir(tmp_path, stored, case):
    words = NAMES[case]
    outside = snapshot(tmp_path)
    result = run_here([words[0], "--data-dir", str(stored), *words[1:]], {"TENANT_EVENTS_ACCESS_TOKEN": "x"})
    one_line(result, 2, "lowercase letters, digits or dashes")
    assert snapshot(tmp_path) == outside and not list(tmp_path.parent.glob("escape*"))


# -- 6. numbers: non-finite, negative, zero where zero makes no sense -------------------------------------------
NUMBERS = [
    (["stream", "--base-url", DEAD_URL], "--unreachable-timeout", ["nan", "-1", "inf", "1e9"]),
    (["stream", "--base-url", DEAD_URL], "--stall-timeout", ["0", "-5", "nan", "inf", "0.01"]),
    (["stream", "--base-url", DEAD_URL], "--keep-live", ["0", "-1", "nan", "30m", "1e9d", "0.5h"]),
    (["stream", "--base-url", DEAD_URL], "--keep-archive", ["inf", "0d", "forever", "99999999d"]),
    (
        ["relay", "--base-url", DEAD_URL, "--hub", "nats://127.0.0.1:9"],
        "--keep-live",
        ["nan", "0h"],
    ),
    (
        ["relay", "--base-url", DEAD_URL, "--hub", "nats://127.0.0.1:9"],
        "--hub-retention-days",
        ["nan", "0", "-1"],
    ),
    (
        ["relay", "--base-url", DEAD_URL, "--hub", "nats://127.0.0.1:9"],
        "--lease-seconds",
        ["inf", "0", "nan"],
    ),
    (["alerts"], "--limit", ["0", "-1", "nan", "1.5"]),
    (["rules", "--try", "off-hours"], "--days", ["nan", "0", "inf", "-3"]),
    (["login", "--auth-url", "http://127.0.0.1:9", "--client-id", "abc"], "--timeout", ["nan", "-1", "0"]),
    (["simulator", "--ephemeral"], "--rate", ["nan", "inf"]),
    (["simulator", "--ephemeral"], "--port", ["-1", "70000", "nan"]),
]
NUMBER_ROWS = [(words, option, value) for words, option, values in NUMBERS for value in values]


@pytest.mark.parametrize(
    ("words", "option", "value"), NUMBER_ROWS, ids=[f"{w[0]} {o} {v}" for w, o, v in NUMBER_ROWS]
)
def test_number_out_of_range(stored, words, option, value):
    before = snapshot(stored)
    argv = [
        words[0],
        *(["--data-dir", str(stored)] if words[0] != "simulator" else []),
        *words[1:],
        option,
        value,
    ]
    result = run_here(argv, {"TENANT_EVENTS_ACCESS_TOKEN": "x"})
    one_line(result, 2, option, repr(value))
    assert snapshot(stored) == before


# -- 6b. moments: neither a date-time nor a duration, or far outside the times events carry ---------------------
MOMENTS = [
    (
        ["access"],
        "--at",
        ["nan", "2026-13-01", "99999999999d", "0001-01-01T00:00:00Z", "9999-12-31T00:00:00Z"],
    ),
    (["access", "diff"], "--from", ["inf", "-1", "99999999999d"]),
    (["access", "diff", "--from", "1d"], "--to", ["tomorrow", "2100-01-02T00:00:00Z"]),
    (["alerts"], "--since", ["99999999999d", "0001-01-01T00:00:00Z"]),
]
MOMENT_ROWS = [(words, option, value) for words, option, values in MOMENTS for value in values]


@pytest.mark.parametrize(
    ("words", "option", "value"), MOMENT_ROWS, ids=[f"{' '.join(w)} {o} {v}" for w, o, v in MOMENT_ROWS]
)
def test_moment_that_cannot_be(stored, words, option, value):
    before = snapshot(stored)
    result = run_here([words[0], "--data-dir", str(stored), *words[1:], f"{option}={value}"])
    one_line(result, 2, option, repr(value))
    assert snapshot(stored) == before


def test_a_moment_before_the_stored_history_is_one_line(stored):
    result = run_here(["access", "--data-dir", str(stored), "--at", "2001-01-01T00:00:00Z"])
    one_line(result, 2, "cannot be known", "ask about a moment from")
    no_crash_report(stored)


# -- 7. malformed URLs ------------------------------------------------------------------------------------------
URLS = [
    "http://[::1",
    "http://[zz::1]:8080/api/v2",
    "http://[::1]:99999/api/v2",
    "https://exa mple.com",
    "http://127.0.0.1:abc/api/v2",
]


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("option", ["stream --base-url", "login --auth-url", "login --base-url"])
def test_malformed_url(tmp_path, option, url):
    command, flag = option.split()
    data = tmp_path / "data"
    extra = {"stream": [], "login": ["--client-id", "abc", "--no-browser", "--timeout", "1"]}[command]
    if flag == "--base-url" and command == "login":
        extra = [*extra, "--auth-url", "http://127.0.0.1:9"]
    result = run_here(
        [command, "--data-dir", str(data), flag, url, *extra], {"TENANT_EVENTS_ACCESS_TOKEN": "x"}
    )
    one_line(result, 3, "is not a valid URL")
    assert not (data / "settings.json").exists() and not (data / "tenants").exists()


# -- 7b. a team archive named wrong: one line, the password never repeated, nothing made ---------------------
HUB_VIEW = ["stream", "--hub", "nats://127.0.0.1:9", "--hub-tenant", "acme"]
RELAY = ["relay", "--base-url", DEAD_URL, "--hub", "nats://127.0.0.1:9"]
CATALOG = "postgres:dbname=events host=127.0.0.1 user=viewer"
IN_BUCKET = ["--team-archive", CATALOG, "--team-archive-path", "s3://team/e"]
TEAM_ARCHIVES = {
    "a password in the catalog": (
        [*RELAY, "--team-archive", "postgres:dbname=e password=Sekr3t-pw", "--team-archive-path", "/srv/e"],
        ["--team-archive", "holds a password"],
    ),
    "a URL with a password": (
        [*HUB_VIEW, "--team-archive", "postgresql://u:Sekr3t-pw@db/e", "--team-archive-path", "/srv/e"],
        ["--team-archive", "is not a PostgreSQL catalog"],
    ),
    "no database": (
        [*RELAY, "--team-archive", "postgres:host=db", "--team-archive-path", "/srv/e"],
        ["--team-archive", "names no database"],
    ),
    "no folder": ([*HUB_VIEW, "--team-archive", CATALOG], ["--team-archive-path", "is required"]),
    "a relative folder": (
        [*RELAY, "--team-archive", CATALOG, "--team-archive-path", "shared/e"],
        ["--team-archive-path", "absolute folder path"],
    ),
    "another kind of place": (
        [*RELAY, "--team-archive", CATALOG, "--team-archive-path", "gs://bucket/e"],
        ["--team-archive-path", "gs:// is not a place"],
    ),
    "a bucket S3 cannot name": (
        [*RELAY, "--team-archive", CATALOG, "--team-archive-path", "s3://Team_Bucket/e"],
        ["--team-archive-path", "names no valid bucket"],
    ),
    "an endpoint with a password": (
        [*HUB_VIEW, *IN_BUCKET, "--team-archive-endpoint", "https://minio:Sekr3t-pw@s3.example.org"],
        ["--team-archive-endpoint", "holds a user or password"],
    ),
    "storage options for a folder": (
        [
            *RELAY,
            "--team-archive",
            CATALOG,
            "--team-archive-path",
            "/srv/e",
            "--team-archive-url-style",
            "path",
        ],
        ["--team-archive-url-style", "is for files in object storage only"],
    ),
    "a URL style S3 has not": (
        [*RELAY, *IN_BUCKET, "--team-archive-url-style", "dns"],
        ["--team-archive-url-style", "is not a URL style"],
    ),
    "without a hub": (
        ["stream", "--base-url", DEAD_URL, "--team-archive", CATALOG, "--team-archive-path", "/srv/e"],
        ["--team-archive", "is read through a team hub"],
    ),
    "some event types": (
        [
            *HUB_VIEW,
            "--event-type",
            "user.created",
            "--team-archive",
            CATALOG,
            "--team-archive-path",
            "/srv/e",
        ],
        ["--event-type", "every event type"],
    ),
}


@pytest.mark.parametrize("case", TEAM_ARCHIVES)
def test_team_archive_named_wrong(stored, case):
    words, said = TEAM_ARCHIVES[case]
    before = snapshot(stored)
    result = run_here([words[0], "--data-dir", str(stored), *words[1:]], {"TENANT_EVENTS_ACCESS_TOKEN": "x"})
    one_line(result, 3, *said)
    assert "Sekr3t" not in result.err + result.out
    assert snapshot(stored) == before


# -- 8. a settings file nested past any sense -------------------------------------------------------------------
NESTED = {
    "100k-deep-array": '{"schema_version": 2, "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "900-deep-rule": '{"schema_version": 2, "alerts": {"rules": [' + '{"a":' * 900 + "1" + "}" * 900 + "]}}",
}


@pytest.mark.parametrize("case", NESTED)
@pytest.mark.parametrize("command", ["rules --check", "stream"])
def test_settings_nested_too_deep(tmp_path, command, case):
    data = tmp_path / "data"
    data.mkdir()
    settings = data / "settings.json"
    settings.write_text(NESTED[case])
    argv = (
        ["rules", "--data-dir", str(data), "--check"]
        if command == "rules --check"
        else ["stream", "--data-dir", str(data), "--base-url", DEAD_URL, "--unreachable-timeout", "0.3"]
    )
    result = run_apart(argv)
    assert "unexpected error" not in result.err and "Traceback" not in result.err, result.err
    told = [line for line in result.err.splitlines() if "settings file" in line]
    assert len(told) == 1 and "moved to" in told[0] and "nested" in told[0], result.err
    moved = list(data.glob("settings.json.broken-*"))
    assert len(moved) == 1 and moved[0].read_text() == NESTED[case] and str(moved[0]) in told[0]
    assert result.code == (0 if command == "rules --check" else 6), result.err
    no_crash_report(data)


# -- 9. the team parts: triage, links, rule files, key files, closed outputs -------------------------------------
@pytest.fixture
def with_alert(stored) -> Path:
    """`stored` with one alert (id 1) raised on its events."""
    from helpers.deliveries import alert_write, store_alerts

    assert store_alerts(stored / "tenants" / "acme.sqlite3", [alert_write()]) == [1]
    return stored


def _alias_bomb(path: Path) -> Path:
    """1 KB of YAML whose aliases expand to 9¹¹ nodes, in a fixture's event data (which the rule model copies)."""
    lines = ["a: &a {k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x, k8: x, k9: x}"]
    for i in range(1, 12):
        name, before = chr(ord("a") + i), chr(ord("a") + i - 1)
        lines.append(f"{name}: &{name} {{" + ", ".join(f"k{j}: *{before}" for j in range(1, 10)) + "}")
    lines.append(
        "rules: [{id: bomb, name: Bomb, types: [user.created], severity: info, tests: [{name: t, expect: fires,"
        " events: [{type: user.created, data: *l}]}]}]"
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def _sigma(path: Path, condition: str, selection: str = "{type: user.created}") -> Path:
    path.write_text(
        "title: hostile\nlogsource: {product: auth0, service: events}\n"
        f"detection:\n  sel: {selection}\n  condition: {condition}\nlevel: high\n"
    )
    return path


def _inputs(tmp: Path) -> dict[str, tuple[list[str], int, tuple[str, ...]]]:
    """row → (argv after the data dir, exit code, words of the one line)."""
    fifo = tmp / "fifo.yml"
    os.mkfifo(fifo)
    hub = ["--hub", "nats://127.0.0.1:9", "--hub-tenant", "acme"]
    return {
        "triage snooze --for 999999999999999d": (
            ["triage", "snooze", "1", "--for", "999999999999999d"],
            3,
            ("--for", "longer than a year", "triage resolve"),
        ),
        "triage snooze --until 9999-12-31": (
            ["triage", "snooze", "1", "--until", "9999-12-31T00:00"],
            3,
            ("--until", "more than a year from now"),
        ),
        "triage ack 99999999999999999999999": (
            ["triage", "ack", "99999999999999999999999"],
            2,
            ("'99999999999999999999999' is not an alert ID",),
        ),
        "rules export --sigma /proc/x": (
            ["rules", "export", "--sigma", "/proc/x"],
            3,
            (
                "--sigma: /proc/x cannot be made a folder (No such file or directory)",
                "a folder you can write in",
            ),
        ),
        "stream --hub-nkey /dev/zero": (
            ["stream", *hub, "--hub-nkey", "/dev/zero"],
            3,
            ("--hub-nkey: /dev/zero is not a regular file",),
        ),
        "stream --hub-nkey FIFO": (
            ["stream", *hub, "--hub-nkey", str(fifo)],
            3,
            (f"--hub-nkey: {fifo} is not a regular file",),
        ),
        "relay --hub-creds /dev/zero": (
            ["relay", "--base-url", DEAD_URL, *hub, "--hub-creds", "/dev/zero"],
            3,
            ("--hub-creds: /dev/zero is not a regular file",),
        ),
        "rules test FIFO": (
            ["rules", "test", str(fifo)],
            3,
            ("cannot be read as rules: is not a regular file",),
        ),
        "rules test /dev/zero": (
            ["rules", "test", "/dev/zero"],
            3,
            ("/dev/zero: cannot be read as rules: is not a regular file",),
        ),
        "rules test alias bomb": (
            ["rules", "test", str(_alias_bomb(tmp / "bomb.yml"))],
            3,
            ("cannot be read as rules", "aliases expand to too many nodes"),
        ),
        "rules test 2 MB": (
            ["rules", "test", str(_big(tmp / "big.yml"))],
            3,
            ("cannot be read as rules: is larger than 1,000,000 bytes",),
        ),
        "rules import 200-deep not": (
            ["rules", "import", str(_sigma(tmp / "deep.yml", "not " * 200 + "sel"))],
            3,
            ("Sigma rule 'hostile': its condition nests too deeply",),
        ),
        "link with a bad host": (["tenant-events://[::1"], 2, ("not an alert link",)),
        "link with a huge id": (
            ["tenant-events://alert/acme/99999999999999999999999"],
            2,
            ("not an alert link",),
        ),
    }


def _big(path: Path) -> Path:
    path.write_text("# " + "x" * 2_000_000 + "\n")
    return path


INPUT_ROWS = (
    "triage snooze --for 999999999999999d",
    "triage snooze --until 9999-12-31",
    "triage ack 99999999999999999999999",
    "rules export --sigma /proc/x",
    "stream --hub-nkey /dev/zero",
    "stream --hub-nkey FIFO",
    "relay --hub-creds /dev/zero",
    "rules test FIFO",
    "rules test /dev/zero",
    "rules test alias bomb",
    "rules test 2 MB",
    "rules import 200-deep not",
    "link with a bad host",
    "link with a huge id",
)


@pytest.mark.parametrize("row", INPUT_ROWS)
def test_a_team_parts_input_is_one_line(with_alert, tmp_path, row):
    argv, code, words = _inputs(tmp_path)[row]
    full = (
        [*argv[:1], "--data-dir", str(with_alert), *argv[1:]]
        if not argv[0].startswith("tenant-events:")
        else argv
    )
    before = snapshot(with_alert)
    line = one_line(run_here(full, {"TENANT_EVENTS_ACCESS_TOKEN": "x"}), code, *words)
    print(f"{row}: exit {code}: {line}")
    assert snapshot(with_alert) == before
    no_crash_report(with_alert)


CLOSED_STDOUT = {
    "export --csv - >&-": ["export", "--csv", "-"],
    "export --jsonl - >&-": ["export", "--jsonl", "-"],
    "alerts --jsonl - >&-": ["alerts", "--jsonl", "-"],
    "alerts >&-": ["alerts", "--mark-read"],
}


@pytest.mark.parametrize("row", CLOSED_STDOUT)
def test_an_output_to_a_closed_stdout_is_one_line(with_alert, row):
    words = CLOSED_STDOUT[row]
    before = snapshot(with_alert)
    result = run_apart(
        [words[0], "--data-dir", str(with_alert), *words[1:]], prefix=["sh", "-c", 'exec "$@" >&-', "sh"]
    )
    line = one_line(result, 2, "cannot write standard output: it is closed")
    print(f"{row}: exit 2: {line}")
    kept = {k: v for k, v in snapshot(with_alert).items() if not k.endswith(("-wal", "-shm"))}  # a reader's
    assert kept == before  # (--mark-read marks nothing it could not list)
    no_crash_report(with_alert)


def test_sigma_text_reaches_the_terminal_escaped_and_re2_says_nothing_of_its_own(with_alert, tmp_path):
    """A Sigma file's title and a regular expression RE2 refuses, both with an escape sequence in them."""
    escape = "\x1b]0;owned\x07\x1b[31m"
    bad = _sigma(
        tmp_path / "regex.yml",
        "sel",
        '{data.object.name|re: "' + escape.replace("\x1b", "\\x1b").replace("\x07", "\\x07") + '(?<=x)"}',
    )
    result = run_apart(["rules", "import", str(bad), "--data-dir", str(with_alert)])
    line = one_line(result, 3, "does not compile in RE2")
    assert "\x1b" not in result.err and "\x07" not in result.err, line  # (RE2 logged the pattern raw before)
    titled = tmp_path / "title.yml"
    titled.write_text(
        _sigma(tmp_path / "t.yml", "sel").read_text().replace("title: hostile", 'title: "evil\\x1b[2J"')
    )
    imported = run_apart(["rules", "import", str(titled), "--data-dir", str(with_alert)])
    assert imported.code == 0, imported.err
    listed = run_apart(["rules", "--data-dir", str(with_alert)])
    tried = run_apart(["rules", "--try", "evil-2j", "--data-dir", str(with_alert)])
    for result in (imported, listed, tried):
        assert "\x1b" not in result.out + result.err, result
    assert "evil\\x1b[2J" in listed.out and "evil\\x1b[2J" in tried.out


def test_a_teammates_triage_with_a_time_out_of_range_is_shown_not_a_crash(with_alert):
    """What an older version stored from a teammate's hub entry (a time of 1e300): `triage show` says so."""
    db = with_alert / "tenants" / "acme.sqlite3"
    result = run_here(["triage", "ack", "1", "--data-dir", str(with_alert), "--note", "mine"])
    assert result.code == 0, result.err
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO alert_triage_log (alert_id, at, state, by, until, note) VALUES (1, 1e300, 'snoozed', 'eve', -1e300, '')"
        )
    shown = run_here(["triage", "show", "1", "--data-dir", str(with_alert)])
    assert shown.code == 0 and "unexpected error" not in shown.err, shown.err
    assert "snoozed by eve (a time out of range) until (a time out of range)" in shown.out


def test_rules_export_writes_through_no_planted_symlink(with_alert, tmp_path):
    """The temporary file of `rules export --sigma` had a name anyone could guess: a symlink planted under it
    sent the export into the link's target."""
    out = tmp_path / "sigma"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for rule in ("off-hours", "mass-deletion", "new-admin"):
        (out / f".{rule}.yml.tmp").symlink_to(victim)
    result = run_here(["rules", "export", "--sigma", str(out), "--data-dir", str(with_alert)])
    assert result.code == 0, result.err
    assert victim.read_text() == "precious\n"
    assert (out / "off-hours.yml").is_file() and not (out / "off-hours.yml").is_symlink()
    assert not [
        p for p in out.iterdir() if p.name.startswith(".") and not p.is_symlink()
    ]  # no temp file left
