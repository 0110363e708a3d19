"""The concurrency matrix: every documented command run beside a live writer of the same data dir, as a user runs
them (each its own process), then the writer's store looked at: its -wal and -shm on disk and open by the writer
(no descriptor on a "(deleted)" file), the writer still storing, every stored id the simulator's own, once and in
order, and nowhere a "disk I/O error". Each command runs to its end, and again killed (SIGKILL) while it holds the
database open. The writer is shared by all the cases (`stream` in tests/proving/test_neighbours_stream.py, the
app's real window in tests/ui/app/test_neighbours_app.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.fixtures_engine import CHILD_PYTHON, reference_ids
from helpers.sigma_samples import VIP_DELETED
from helpers.slack import bound
from tenant_events.crash import MARKER_DIR
from tenant_events.errors import StorageError
from tenant_events.store import EventReader

TENANT = "demo"
HOOK_URL = "json://127.0.0.1:9/nobody-listens"  # the discard port: `destinations test` fails fast, in words
BAD_WORDS = ("disk I/O error", "Traceback", "unexpected error", "database disk image is malformed")

# name → the command's words after the verb's own --data-dir (filled by `argv`); None: a long-running neighbour
COMMANDS: dict[str, list[str]] = {
    "export": ["export", "--tenant", TENANT, "--jsonl", "{tmp}/out.jsonl"],
    "export-query": ["export", "--tenant", TENANT, "--csv", "-", "--query", "type:user.*"],
    "alerts": ["alerts", "--tenant", TENANT, "--jsonl", "-"],
    "alerts-mark-read": ["alerts", "--tenant", TENANT, "--mark-read"],
    "timeline": ["timeline", "--tenant", TENANT, "{user}"],
    "rules-try": ["rules", "--try", "off-hours", "--days", "1", "--tenant", TENANT],
    "rules-test": ["rules", "test"],
    "rules-import": ["rules", "import", "{tmp}/vip.yml"],
    "triage-ack": ["triage", "ack", "{alert}", "--tenant", TENANT, "--note", "seen"],
    "triage-show": ["triage", "show", "{alert}", "--tenant", TENANT],
    "destinations-list": ["destinations", "list"],
    "destinations-test": ["destinations", "test", "hook"],
    "reindex": ["reindex", "--tenant", TENANT],
}
LONG_RUNNING = ("second-stream", "second-app")  # started, left running a while, then stopped or killed


@dataclass
class Case:
    name: str
    killed: bool
    code: int | None = None
    held_db: bool = False  # the command had the database open (when killed: killed while it had)
    stored_before: int = 0
    stored_after: int = 0
    problems: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list, repr=False)


@dataclass
class Writer:
    """What the matrix needs of the writer: its pid, its data dir, where its messages go."""

    pid: int
    data_dir: Path
    messages: Callable[[], str]
    stream_args: list[str]  # `stream` of the same simulator into the same data dir (the second stream)
    env: dict[str, str]


def db_of(data_dir: Path) -> Path:
    return data_dir / "tenants" / f"{TENANT}.sqlite3"


def stored_count(db: Path) -> int:
    try:
        with EventReader(db) as reader:
            return reader.count()
    except (StorageError, sqlite3.Error):  # not made yet
        return -1


def held_files(pid: int, db: Path) -> list[str]:
    """The database's files process `pid` has open, as /proc names them ("… (deleted)" once removed)."""
    out = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(db)):
            out.append(target)
    return out


def argv(words: list[str], data_dir: Path, tmp: Path, fill: dict[str, str]) -> list[str]:
    filled = [w.format(tmp=tmp, **fill) for w in words]
    return [sys.executable, "-m", "tenant_events", *filled, "--data-dir", str(data_dir)]


def child_env(writer: Writer) -> dict[str, str]:
    env = {**os.environ, **writer.env}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHILD_PYTHON), env.get("PYTHONPATH")]))
    return env


def prepare(
    writer: Writer, tmp: Path, wait: Callable[[Callable[[], Any], float, str], Any]
) -> dict[str, str]:
    """What the cases need: a Sigma file to import, a destination to test, an alert to triage, a user to look up."""
    (tmp / "vip.yml").write_text(VIP_DELETED, encoding="utf-8")
    env = child_env(writer)
    add = argv(["destinations", "add", "hook"], writer.data_dir, tmp, {})
    done = subprocess.run(add, input=HOOK_URL + "\n", capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    db = db_of(writer.data_dir)

    def first_alert() -> str | None:
        found = subprocess.run(
            argv(["alerts", "--tenant", TENANT, "--jsonl", "-"], writer.data_dir, tmp, {}),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        line = found.stdout.splitlines()[:1]
        return str(json.loads(line[0])["alert_id"]) if line else None

    alert = wait(first_alert, 120, "an alert raised by the writer's rules")
    user = "email:nobody@example.com"
    with EventReader(db) as reader:
        for event, raw in reader.export_iter():
            found = re.search(r'"user_id":\s*"([^"]+)"', raw) if event.type.startswith("user.") else None
            if found:
                user = f"user:{found.group(1)}"
                break
    return {"alert": alert, "user": user}


def run_neighbour(case: Case, writer: Writer, tmp: Path, fill: dict[str, str]) -> str:
    """Run one command (or long-running neighbour) to its end, or kill it once it holds the database."""
    db = db_of(writer.data_dir)
    env = child_env(writer)
    if case.name == "second-stream":
        cmd = [sys.executable, "-m", "tenant_events", *writer.stream_args]
    elif case.name == "second-app":
        cmd = [sys.executable, "-m", "tenant_events", "gui", "--data-dir", str(writer.data_dir)]
    else:
        cmd = argv(COMMANDS[case.name], writer.data_dir, tmp, fill)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env
    )
    long_running = case.name in LONG_RUNNING
    deadline = time.monotonic() + bound(60 if long_running else 120)
    started = writer.data_dir / MARKER_DIR / f"{proc.pid}.json"  # the app's own run marker (crash.py)
    while proc.poll() is None and time.monotonic() < deadline:
        if held_files(proc.pid, db):
            case.held_db = True
        if case.held_db and case.killed:
            break
        if long_running and (case.held_db or started.exists()):
            if (
                not case.killed
            ):  # running beside the writer: let it work a while, then stop it as a user would
                time.sleep(3)
            break
        time.sleep(0.01)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL if case.killed else signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    case.code = proc.returncode
    return (out + err).decode("utf-8", "replace")


def check_store(case: Case, writer: Writer, output: str, wait: Callable[..., Any]) -> None:
    """After each case: the files, the writer's descriptors, storing on, the ids, the words."""
    db = db_of(writer.data_dir)
    for suffix in ("-wal", "-shm"):
        if not db.with_name(db.name + suffix).exists():
            case.problems.append(f"{db.name}{suffix} gone from the disk")
    held = held_files(writer.pid, db)
    names = sorted({Path(h).name for h in held})
    if [h for h in held if h.endswith("(deleted)")]:
        case.problems.append(f"the writer holds deleted files: {names}")
    for suffix in ("-wal", "-shm"):
        if str(db) + suffix not in held:
            case.problems.append(f"the writer does not hold {db.name}{suffix} open (it holds {names})")
    goal = case.stored_before + 5
    try:
        wait(lambda: stored_count(db) >= goal, 90, f"the writer storing past {goal} after {case.name}")
    except AssertionError as exc:
        case.problems.append(str(exc))
    with EventReader(db) as reader:
        ids = [e.event_id for e, _ in reader.export_iter()]
    case.stored_after = len(ids)
    case.ids = (
        ids  # held against the simulator's log at the end (`against_the_log`): one read of it, not thirty
    )
    if len(ids) != len(set(ids)):
        case.problems.append("an event stored twice")
    for words in (output, writer.messages()):
        for bad in BAD_WORDS:
            if bad in words:
                case.problems.append(
                    f"{bad!r} in {'the command' if words is output else 'the writer'}: {words[-600:]}"
                )


def against_the_log(cases: list[Case], sim: Any) -> None:
    """Every case's stored ids must be the start of the simulator's own log: nothing lost, nothing reordered."""
    longest = max((len(c.ids) for c in cases), default=0)
    log = reference_ids(sim, longest, timeout=120)
    for case in cases:
        if case.ids != log[: len(case.ids)]:
            case.problems.append("the stored ids are not the simulator's log (an event lost or out of order)")


def table(cases: list[Case]) -> str:
    lines = [
        "| neighbour | killed | exit | had the db | stored before → after | problems |",
        "|---|---|---:|---|---|---|",
    ]
    for c in cases:
        held = "yes" if c.held_db else "no"
        lines.append(
            f"| {c.name} | {'SIGKILL' if c.killed else '-'} | {c.code} | {held} |"
            f" {c.stored_before} → {c.stored_after} | {'; '.join(c.problems) or 'none'} |"
        )
    return "\n".join(lines)
