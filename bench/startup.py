"""Start-up time of the desktop app: frozen bundle and source tree, measured side by side in one run.

Two figures per start, both read from the app's own JSON log lines on stderr:
  * tray icon shown  — process start to the tray icon on screen (goal < 1.0 s median, frozen);
  * live resumed     — process start to the engine's `live` state on a tenant with a stored cursor and a
                       stored sign-in (goal < 2 s median, frozen).
Set-up, not measured: the real simulator on loopback, `tenant-events login` through its login page (this script
acts as the browser), and one run of the app so the tenant has a stored cursor. Needs an X display, a session
bus and an unlocked keyring: without them the script re-runs itself inside the same session the tests use
(`xvfb-run dbus-run-session tests/harness/session.sh`), with the trayer tray host started for the icon.

    .venv/bin/python bench/startup.py [--runs 7] [--bundle dist/TenantEvents/TenantEvents]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def in_session() -> bool:
    return os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1" and bool(os.environ.get("DISPLAY"))


def reexec_in_session() -> int:
    cmd = [
        "xvfb-run",
        "-a",
        "-s",
        "-screen 0 1280x1024x24",
        "dbus-run-session",
        "--",
        "bash",
        str(ROOT / "tests/harness/session.sh"),
        "--exec",
        sys.executable,
        *sys.argv,
    ]
    return subprocess.call(cmd, cwd=ROOT)


def sign_in(auth_url: str, client_id: str, data: Path) -> None:
    from helpers.browser import act_as_browser

    login = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "login",
            "--no-browser",
            "--auth-url",
            auth_url,
            "--client-id",
            client_id,
            "--name",
            "bench",
            "--data-dir",
            str(data),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert login.stdout is not None
    act_as_browser(login.stdout.readline().strip(), "allow")
    _out, err = login.communicate(timeout=60)
    if login.returncode != 0:
        raise SystemExit(f"login failed: {err}")


def one_start(cmd: list[str], data: Path, timeout: float = 60.0) -> tuple[float, float]:
    """Start the app, return (seconds to tray icon shown, seconds to live); then quit it with SIGTERM."""
    env = dict(os.environ, TENANT_EVENTS_LOG_JSON="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*cmd, "--data-dir", str(data)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    tray = live = float("nan")
    done = threading.Event()
    lines: list[str] = []

    def read() -> None:
        nonlocal tray, live
        assert proc.stderr is not None
        for line in proc.stderr:
            now = time.perf_counter() - t0
            lines.append(line)
            try:
                msg = json.loads(line).get("msg", "")
            except ValueError:
                continue
            if tray != tray and msg.startswith("tray icon shown"):
                tray = now
            if live != live and msg.startswith("bench: live"):
                live = now
            if tray == tray and live == live:
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    finished = done.wait(timeout)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if not finished or tray != tray or live != live:
        raise SystemExit(f"start did not reach tray+live within {timeout} s:\n{''.join(lines)[-3000:]}")
    return tray, live


def drop_caches() -> bool:
    """Best effort 'cold' start: drop the page cache when allowed (root outside a container)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bundle", default=str(ROOT / "dist/TenantEvents/TenantEvents"))
    args = parser.parse_args()
    if not in_session():
        return reexec_in_session()
    bundle = Path(args.bundle)
    if not bundle.exists():
        print("building the bundle first (packaging/build.sh) …", flush=True)
        subprocess.run(
            ["bash", "packaging/build.sh"],
            cwd=ROOT,
            check=True,
            env=dict(os.environ, PYTHON_BIN=sys.executable),
        )

    from tenant_events.simulator.testing import running_simulator

    tray_host = (
        subprocess.Popen(["trayer", "--expand", "false"], stderr=subprocess.DEVNULL)
        if shutil.which("trayer")
        else None
    )
    variants = {"frozen": [str(bundle)], "source": [sys.executable, "-m", "tenant_events"]}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    cold = False
    try:
        with tempfile.TemporaryDirectory() as tmp, running_simulator(rate=5, heartbeat=1.0) as sim:
            data = Path(tmp) / "data"
            sign_in(sim.auth_url, sim.demo_client_id, data)
            one_start(variants["source"], data)  # first run stores a cursor; not measured
            for i in range(args.runs):
                for name, cmd in variants.items():  # interleaved, so load drifts hit both alike
                    cold = drop_caches() or cold
                    results[name].append(one_start(cmd, data))
                print(f"run {i + 1}/{args.runs} done", flush=True)
    finally:
        if tray_host is not None:
            tray_host.terminate()
    print(
        f"\nstart-up, median of {args.runs} runs each ({'page cache dropped before each start' if cold else 'warm page cache: dropping it was not allowed here'}); load: {os.getloadavg()[0]:.2f}"
    )
    print(f"{'':8} {'tray icon shown':>16} {'live (resumed)':>16}")
    for name, runs in results.items():
        tray = statistics.median(r[0] for r in runs)
        live = statistics.median(r[1] for r in runs)
        print(f"{name:8} {tray:>15.2f}s {live:>15.2f}s")
    print("goals (frozen): tray < 1.0 s, live < 2.0 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
