"""The relay and viewer commands as subprocesses for the hub tests, and how to read what a viewer stored."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson

from helpers.fixtures_engine import OLD
from helpers.slack import bound
from tenant_events.store import EventReader


class HubCli:
    """One `tenant-events relay|stream` process; a thread keeps its stderr lines (for roles and states)."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.args = args
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tenant_events", *args],
            env={**os.environ, "PYTHONFAULTHANDLER": "1", **env},  # (a hung process's threads, at stop)
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def count(self, text: str) -> int:
        with self._changed:
            return sum(text in line for line in self.lines)

    def wait_for(self, text: str, *, times: int = 1, timeout: float = 30.0) -> float:
        """Until `text` appeared in `times` stderr lines (within `timeout` stretched for a loaded machine, as every
        shared wait is); returns the seconds waited."""
        timeout = bound(timeout)
        start = time.monotonic()
        with self._changed:
            while sum(text in line for line in self.lines) < times:
                left = start + timeout - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._changed.wait(0.2)):
                    raise AssertionError(
                        f"no {text!r} from {self.args[0]} within {timeout} s (exit "
                        f"{self.proc.poll()}):\n" + "\n".join(self.lines[-25:])
                    )
                self._changed.wait(min(left, 0.2))
        return time.monotonic() - start

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)
        self._close()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(bound(30))
        except subprocess.TimeoutExpired:
            # where it hangs: SIGABRT makes Python print every thread's stack (PYTHONFAULTHANDLER), then it is gone
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self._close()
            raise AssertionError(
                f"{self.args[0]} did not stop within {bound(30):.0f} s of SIGTERM:\n"
                + "\n".join(self.lines[-120:])
            ) from None
        self._close()
        return code

    def _close(self) -> None:
        """The process is gone: let the reader reach the end of its stderr, then close the pipe."""
        self._reader.join(5)
        if self.proc.stderr is not None and not self._reader.is_alive():
            self.proc.stderr.close()

    def text(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def report(self, log_lines: int = 80) -> str:
        """What a failed wait prints of this process: its whole stderr (its roles and notes, a few dozen lines),
        the last `log_lines` of its log file (the data dir's logs/) and, for a team relay, its outbox."""
        out = [f"== {self.args[0]} (exit {self.proc.poll()}) stderr:", self.text()]
        data = self.args[self.args.index("--data-dir") + 1] if "--data-dir" in self.args else None
        log = Path(data) / "logs" / "tenant-events.log" if data else None
        if log is not None and log.exists():
            tail = log.read_text(errors="replace").splitlines()[-log_lines:]
            out += [f"== its log ({log.name}, last {len(tail)} lines):", *tail]
        team = Path(data) / "tenants" / "acme-team.sqlite3" if data else None
        if team is not None and team.exists():
            out += [f"== its team outbox: {outbox_summary(team)}"]
        return "\n".join(out)


def outbox_summary(db: Path) -> str:
    """The alert outbox of a relay's team database in one line (rows routed or not, deliveries by state and
    destination, the destinations' last errors), or why it cannot be read."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            alerts = conn.execute("SELECT count(*) FROM alerts").fetchone()[0]
            rows = conn.execute("SELECT routed, count(*) FROM alert_outbox GROUP BY routed").fetchall()
            deliveries = conn.execute(
                "SELECT destination, state, count(*), max(attempts), max(last_error) FROM alert_deliveries "
                "GROUP BY destination, state"
            ).fetchall()
            status = conn.execute(
                "SELECT name, stopped_reason, last_error FROM destination_status"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable ({exc})"
    return f"{alerts} alerts; outbox rows (routed, n) {rows}; deliveries {deliveries}; destinations {status}"


def stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:  # being created
        return 0


def wait_stored(db: Path, n: int, timeout: float = 60.0, who: HubCli | None = None) -> None:
    timeout = bound(timeout)
    deadline = time.monotonic() + timeout
    while stored_count(db) < n:
        if who is not None and who.proc.poll() is not None:
            raise AssertionError(f"viewer exited {who.proc.returncode}:\n{who.text()[-3000:]}")
        if time.monotonic() > deadline:
            tail = f":\n{who.text()[-3000:]}" if who else ""
            raise AssertionError(f"{db.name}: {stored_count(db)} of {n} stored after {timeout} s{tail}")
        time.sleep(0.05)


def export_ids(data_dir: Path) -> list[str]:
    """The event ids `tenant-events export` writes, in its order (the stored order)."""
    out = subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--data-dir", str(data_dir), "--jsonl", "-"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return [orjson.loads(line)["event"]["id"] for line in out.splitlines()]


def relay(
    sim,
    hub,
    token: str,
    data_dir: Path,
    *,
    lease: str | None = None,
    alerts_to: str | None = None,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> HubCli:
    """`tenant-events relay` from the simulator to the hub as the collector (with `alerts_to`: the team's rules
    evaluated and their alerts sent to that destination; `extra`: more of its options, `env` more of its environment). Its lease (2 s) and stall timeout (1 s) are stretched
    for a loaded machine: a hub that answers late there would otherwise take the lease away every few seconds."""
    lease = lease or f"{bound(2):g}"
    args = ["relay", "--base-url", sim.base_url, "--name", "acme", "--data-dir", str(data_dir)]
    args += [
        "--from-timestamp",
        OLD,
        "--stall-timeout",
        f"{bound(1):g}",
        "--hub",
        hub.urls,
        "--hub-tenant",
        "acme",
    ]
    args += ["--hub-user", "collector", "--lease-seconds", lease]
    args += ["--alerts-to", alerts_to] if alerts_to else []
    args += list(extra)
    secrets = {"TENANT_EVENTS_ACCESS_TOKEN": token, "TENANT_EVENTS_HUB_PASSWORD": hub.credentials.collector}
    return HubCli(*args, env={**secrets, **(env or {})})
