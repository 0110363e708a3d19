"""The desktop window's memory over a long demo session: does the app stay under 200 MB after an hour?

    ./run test --exec .venv/bin/python bench/window_memory.py --minutes 60 --out /tmp/window-memory.jsonl
    ./run test --exec .venv/bin/python bench/window_memory.py --minutes 8 --tracemalloc --act-out 2:mass_deletion

Starts the real app (`tenant-events --demo --data-dir <tmp>`) under bench/mem_probe.py, which samples its RSS,
glibc's heap, SQLite's memory (and with --tracemalloc the Python heap and the sites that grew) from inside the
process. `./run test --exec` gives it the harness's desktop: Xvfb, a session D-Bus, gnome-keyring; this script
adds a dunst (and a tray host when trayer is there) and signs in through tests/ui/app/browser_cmd.py as $BROWSER.

It runs under a window manager (openbox, when installed: --no-window-manager leaves it out), as a desktop does.
Every --drive-every seconds it uses the window as a person would, through xdotool: a query typed and cleared,
a few rows stepped through (the detail pane and its names), the row menu's last "Timeline of …" opened and
closed, the alerts inbox opened and a few alerts read. `--leave-open MIN` instead picks a row and leaves the inbox open over the window from MIN minutes on
(with --drive-every 0: new rows pile up as "new"). `--act-out MIN:KIND` asks the demo simulator to act out an incident (POST /_sim/scenario) MIN minutes
in and takes screenshots (`import -window root`) 20 and 90 seconds later. A bus monitor records every Notify
call (summary, body, urgency, expiry) and when each notification closed.

Prints one line per sample while it runs (also written to --out), then every sample again as one table, the
growth after --warmup minutes, notifications by title, and the verdict: the last RSS against 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
LIMIT_MB = 200.0


def _gdbus_owned(name: str) -> bool:
    out = subprocess.run(
        [
            "gdbus",
            "call",
            "--session",
            "--dest",
            "org.freedesktop.DBus",
            "--object-path",
            "/org/freedesktop/DBus",
            "--method",
            "org.freedesktop.DBus.NameHasOwner",
            name,
        ],
        capture_output=True,
        text=True,
    )
    return "true" in out.stdout


def desktop_helpers(window_manager: bool) -> list[subprocess.Popen[bytes]]:
    """A window manager, a notification daemon and a tray host on the harness's display and bus (what a desktop
    has)."""
    if not (os.environ.get("DISPLAY") and os.environ.get("DBUS_SESSION_BUS_ADDRESS")):
        raise SystemExit(
            "needs X and a session bus: ./run test --exec .venv/bin/python bench/window_memory.py"
        )
    started = []
    if window_manager and shutil.which("openbox"):
        started.append(
            subprocess.Popen(
                ["openbox", "--sm-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        )
    if not _gdbus_owned("org.freedesktop.Notifications"):
        started.append(subprocess.Popen(["dunst"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 10
        while not _gdbus_owned("org.freedesktop.Notifications") and time.monotonic() < deadline:
            time.sleep(0.1)
    if shutil.which("trayer"):
        started.append(
            subprocess.Popen(
                ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request", "--height", "24"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    return started


class NotifyLog:
    """Notify calls, their replies (the notification's id) and NotificationClosed signals on the session bus."""

    def __init__(self, raw: Path) -> None:
        self.shown: list[dict[str, Any]] = []
        self._by_serial: dict[tuple[str, str], dict[str, Any]] = {}
        self._by_id: dict[int, dict[str, Any]] = {}
        self._raw = raw.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [
                "dbus-monitor",
                "--session",
                "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
                "type='method_return'",
                "type='signal',interface='org.freedesktop.Notifications',member='NotificationClosed'",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    @staticmethod
    def _field(header: str, key: str) -> str:
        found = re.search(rf"\b{key}=(\S+)", header)
        return found.group(1) if found else ""

    def _read(self) -> None:
        assert self.proc.stdout is not None
        block: list[str] = []
        for line in self.proc.stdout:
            if line.startswith(("method call ", "method return ", "signal ", "error ")):
                self._block(block)
                block = [line]
            elif block:
                block.append(line)
        self._block(block)

    def _block(self, block: list[str]) -> None:
        if not block:
            return
        head, args = block[0], block[1:]
        at = float(self._field(head, "time") or 0)
        if head.startswith("method call") and "member=Notify" in head:
            self._raw.writelines(block)
            self._raw.flush()
            text = "".join(args)
            strings = re.findall(r'^   string "(.*?)"$', text, re.MULTILINE | re.DOTALL)
            urgency = re.search(r'string "urgency"\s*variant\s+byte (\d+)', text)
            expire = re.findall(r"^   int32 (-?\d+)$", text, re.MULTILINE)
            note = {
                "at": at,
                "summary": strings[2] if len(strings) > 2 else "?",
                "body": strings[3] if len(strings) > 3 else "",
                "urgency": int(urgency.group(1)) if urgency else None,
                "expire_ms": int(expire[-1]) if expire else None,
                "closed": None,
                "reason": None,
            }
            self.shown.append(note)
            self._by_serial[(self._field(head, "sender"), self._field(head, "serial"))] = note
        elif head.startswith("method return"):
            note = self._by_serial.pop(
                (self._field(head, "destination"), self._field(head, "reply_serial")), None
            )
            found = re.search(r"uint32 (\d+)", "".join(args))
            if note is not None and found:
                self._by_id[int(found.group(1))] = note
        elif head.startswith("signal") and "NotificationClosed" in head:
            ids = re.findall(r"uint32 (\d+)", "".join(args))
            if len(ids) == 2 and (note := self._by_id.pop(int(ids[0]), None)) is not None:
                note["closed"], note["reason"] = at, int(ids[1])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self._raw.close()


def _xdo(*args: str) -> str:
    return subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=30).stdout.strip()


class Driver:
    """Uses the main window through the keyboard, as a person would, one step per call."""

    STEPS = ("query", "rows", "timeline", "inbox")

    def __init__(self, pid: int) -> None:
        self.pid, self.turn = pid, 0

    def _window(self) -> str | None:
        found = _xdo("search", "--onlyvisible", "--pid", str(self.pid), "--name", "Tenant Events").split()
        return found[0] if found else None

    def _keys(self, *keys: str, pause: float = 0.4) -> None:
        for key in keys:
            _xdo("key", "--clearmodifiers", key)
            time.sleep(pause)  # a person's pace between keys; the app handles each on its own loop

    def _into_table(self, window: str) -> None:
        """A click on a row of the table (its upper part): focus leaves the query box, a row is picked."""
        _xdo("mousemove", "--window", window, "300", "260", "click", "1")
        time.sleep(0.5)

    def step(self) -> str:
        window = self._window()
        if window is None:
            return "no window"
        _xdo("windowactivate", "--sync", window)  # with a window manager: as a task bar click does
        _xdo("windowfocus", "--sync", window)  # without one
        kind = self.STEPS[self.turn % len(self.STEPS)]
        self.turn += 1
        if kind == "query":
            self._keys("ctrl+f", "ctrl+a", "BackSpace")
            _xdo("type", "--delay", "60", "type:user.deleted OR type:user.created")
            self._keys("Return")
            time.sleep(5)
            self._keys("ctrl+f", "ctrl+a", "BackSpace", "Return")
            self._into_table(window)
            self._keys("f")  # following the newest events again
        elif kind == "rows":
            self._into_table(window)
            self._keys(*["j"] * 6, "k", "k", "n", "f")
        elif kind == "timeline":
            self._into_table(window)
            self._keys("shift+F10", "Up", "Return", pause=0.8)  # the row menu's last entry: "Timeline of …"
            time.sleep(5)
            self._keys("alt+Left")
            self._into_table(window)  # the pane took the focus
            self._keys("f")
        else:  # the inbox (Ctrl+Shift+A): a few alerts read, each with the events behind it; Escape closes it
            self._keys("ctrl+shift+a", pause=1.5)
            self._keys("Home", "Down", "Down", "Down", "Up", pause=1.0)
            self._keys("Escape")
            _xdo("windowactivate", "--sync", window)
            self._keys("n")
        return kind

    def leave_open(self) -> str:
        """A row of the main window picked (Follow off: the table holds its place) and the alerts inbox opened
        over it and left open, so new rows pile up unseen behind it (the title's "N new" grows)."""
        window = self._window()
        if window is None:
            return "no window"
        _xdo("windowactivate", "--sync", window)
        _xdo("windowfocus", "--sync", window)
        self._into_table(window)
        self._keys("End", "Up", "Up")
        self._keys("ctrl+shift+a", pause=1.5)
        self._keys("Home", "Down", pause=1.0)
        return "left open: inbox over a table scrolled away"


def simulator_url(app: psutil.Process) -> str | None:
    """The demo simulator child's admin URL: the loopback port of its that answers /_sim/scenario."""
    for child in app.children(recursive=True):
        try:
            if "simulator" not in child.cmdline():
                continue
            ports = sorted(
                {c.laddr.port for c in child.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
            )
        except psutil.Error:
            continue
        for port in ports:
            try:
                if httpx.get(
                    f"http://127.0.0.1:{port}/.well-known/openid-configuration", timeout=5
                ).is_success:
                    return f"http://127.0.0.1:{port}"
            except httpx.HTTPError:
                continue
    return None


def act_out(app_pid: int, kind: str, events: list[str]) -> None:
    """POST /_sim/scenario answers once the incident has been acted out (tens of seconds for a spread one)."""
    url = simulator_url(psutil.Process(app_pid))
    try:
        ok = url is not None and httpx.post(f"{url}/_sim/scenario", json={"do": kind}, timeout=300).is_success
    except httpx.HTTPError as exc:
        ok, url = False, f"{url}: {exc!r}"
    events.append(f"acted out {kind}" + ("" if ok else f" (FAILED: {url or 'no simulator answered'})"))


def dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def screenshot(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    subprocess.run(["import", "-window", "root", str(path)], check=False, capture_output=True, timeout=60)
    return path


COLUMNS = (
    ("t min", "t", 60),
    ("RSS", "rss_mb", 1),
    ("anon", "anon_mb", 1),
    ("heap used", "malloc_used_mb", 1),
    ("heap free", "malloc_free_kept_mb", 1),
    ("SQLite", "sqlite_mb", 1),
    ("Python", "python_mb", 1),
    ("data dir", "data_mb", 1),
    ("notes", "notes", 1),
)


def row_text(r: dict[str, Any]) -> str:
    cells = []
    for title, key, div in COLUMNS:
        value = r.get(key)
        cells.append(
            f"{value / div:>{len(title)}.1f}" if isinstance(value, int | float) else " " * len(title)
        )
    return "  ".join(cells) + (f"  {r['event']}" if r.get("event") else "")


def last_sample(path: Path) -> dict[str, Any] | None:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    except FileNotFoundError:
        return None
    return json.loads(lines[-1]) if lines else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=5.0, help="minutes before growth is counted")
    ap.add_argument(
        "--drive-every", type=float, default=180.0, help="seconds between uses of the window (0: never)"
    )
    ap.add_argument(
        "--act-out",
        action="append",
        default=[],
        metavar="MIN:KIND",
        help="an incident the simulator acts out MIN minutes in (mass_deletion, admin_grant, ...)",
    )
    ap.add_argument("--tracemalloc", action="store_true", help="also trace Python allocations (inflates RSS)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "window-memory.jsonl")
    ap.add_argument("--data-dir", type=Path, help="the app's data folder (default: a fresh temporary one)")
    ap.add_argument("--no-window-manager", action="store_true", help="run without openbox")
    ap.add_argument(
        "--leave-open",
        type=float,
        metavar="MIN",
        help="MIN minutes in: scroll the table away from the newest row and leave the alerts inbox open over it"
        " (use with --drive-every 0)",
    )
    ns = ap.parse_args()
    acts = sorted((float(m) * 60, kind) for m, _, kind in (a.partition(":") for a in ns.act_out))
    data = ns.data_dir or Path(tempfile.mkdtemp(prefix="window-memory-"))
    work = ns.out.with_suffix("")
    work.mkdir(parents=True, exist_ok=True)
    probe_out = work / "probe.jsonl"
    helpers = desktop_helpers(not ns.no_window_manager)
    notes = NotifyLog(work / "notify.log")
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="xcb",
        TENANT_EVENTS_LOG_JSON="1",
        BROWSER=f"{sys.executable} {ROOT / 'tests' / 'ui' / 'app' / 'browser_cmd.py'} %s",
    )
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "mem_probe.py"),
        "--out",
        str(probe_out),
        "--every",
        str(ns.every),
        "--settle",
        str(ns.warmup * 60),
        *(["--tracemalloc"] if ns.tracemalloc else []),
        "--",
        "--demo",
        "--data-dir",
        str(data),
    ]
    log = (work / "app.log").open("wb")
    app = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    driver = Driver(app.pid)
    print(f"app pid {app.pid}, data {data}, samples {ns.out}, screenshots and logs in {work}", flush=True)
    print("  ".join(t for t, _, _ in COLUMNS), flush=True)
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    next_sample, next_drive = started + ns.every, started + ns.drive_every
    shots: list[tuple[float, str]] = []
    events: list[str] = []
    with ns.out.open("w", encoding="utf-8") as out:
        try:
            while (now := time.monotonic()) - started < ns.minutes * 60 and app.poll() is None:
                if ns.drive_every and now >= next_drive:
                    events.append(f"drove: {driver.step()}")
                    next_drive += ns.drive_every
                if ns.leave_open is not None and now - started >= ns.leave_open * 60:
                    events.append(driver.leave_open())
                    ns.leave_open = None
                if acts and now - started >= acts[0][0]:
                    _, kind = acts.pop(0)
                    threading.Thread(target=act_out, args=(app.pid, kind, events), daemon=True).start()
                    shots += [(now + 20, f"{kind}-20s"), (now + 90, f"{kind}-90s")]
                for due, name in [s for s in shots if now >= s[0]]:
                    shots.remove((due, name))
                    events.append(f"screenshot {screenshot(work, name).name}")
                if now >= next_sample:
                    next_sample += ns.every
                    sample = last_sample(probe_out)
                    if sample is not None:
                        row = {
                            **sample,
                            "t": round(now - started),
                            "data_mb": round(dir_mb(data), 1),
                            "notes": len(notes.shown),
                            "event": "; ".join(events),
                        }
                        events.clear()
                        rows.append(row)
                        out.write(json.dumps(row) + "\n")
                        out.flush()
                        print(row_text(row), flush=True)
                time.sleep(1)
            screenshot(work, "end")
        finally:
            if app.poll() is None:
                app.send_signal(
                    signal.SIGTERM
                )  # the app quits cleanly on SIGTERM; the probe writes its last line
                try:
                    app.wait(60)
                except subprocess.TimeoutExpired:
                    app.kill()
            notes.close()
            for proc in helpers:
                proc.terminate()
    return report(rows, probe_out, notes, ns.warmup * 60, app.returncode)


def report(
    rows: list[dict[str, Any]], probe_out: Path, notes: NotifyLog, warmup: float, rc: int | None
) -> int:
    if not rows:
        print("no samples: the app did not run (see app.log next to --out)")
        return 1
    print(
        "\nRSS over time, every sample (MiB; heap = glibc mallinfo2, Python = tracemalloc when on, data dir = the"
        " app's files)"
    )
    print("  ".join(t for t, _, _ in COLUMNS))
    for r in rows:
        print(row_text({**r, "event": ""}))
    warm = next((r for r in rows if r["t"] >= warmup), rows[0])
    last, peak = rows[-1], max(rows, key=lambda r: r["rss_mb"])
    print(
        f"RSS {rows[0]['rss_mb']:.1f} MiB at {rows[0]['t'] / 60:.1f} min, {warm['rss_mb']:.1f} after warm-up "
        f"({warm['t'] / 60:.1f} min), {last['rss_mb']:.1f} at the end ({last['t'] / 60:.1f} min), peak "
        f"{peak['rss_mb']:.1f} at {peak['t'] / 60:.1f} min: {last['rss_mb'] - warm['rss_mb']:+.1f} MiB since "
        f"warm-up ({(last['rss_mb'] - warm['rss_mb']) / max(1e-9, (last['t'] - warm['t']) / 3600):+.1f} MiB/h)"
    )
    final = last_sample(probe_out)
    if final and final.get("grew"):
        print("Python allocation sites that grew most after warm-up (tracemalloc):")
        print("\n".join(f"  {g}" for g in final["grew"]))
    print(f"\n{len(notes.shown)} notifications:")
    for n in notes.shown:
        life = (
            f"closed after {n['closed'] - n['at']:.0f} s (reason {n['reason']})"
            if n["closed"]
            else "still open"
        )
        print(
            f"  +{n['at'] - notes.shown[0]['at']:6.0f} s urgency {n['urgency']} expire {n['expire_ms']} ms, {life}: "
            f"{n['summary']!r} — {n['body']!r}"
        )
    print(f"app exit code {rc}")
    held = last["rss_mb"] < LIMIT_MB
    print(
        f"verdict: RSS {last['rss_mb']:.1f} MiB after {last['t'] / 60:.0f} min: "
        + (f"under {LIMIT_MB:.0f} MB" if held else f"OVER {LIMIT_MB:.0f} MB")
    )
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
