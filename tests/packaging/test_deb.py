"""The Debian package `./run build` makes: its fields and files, installed into a throw-away root with dpkg,
started from there on the X display (an alert link handed to it too), validated as a desktop entry and an
AppStream component, and removed again without leaving a file behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from helpers.frozen import APP_GOAL_MIB, bundle_sizes, frozen_env
from helpers.slack import bound
from tenant_events import __version__

APP_ID = "io.github.tenantevents.TenantEvents"

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="needs dpkg (Debian or Ubuntu)")


def _deb(frozen_dist: Path) -> Path:
    debs = list(frozen_dist.glob("tenant-events_*.deb"))
    assert len(debs) == 1, f"expected one package beside the bundle, found {debs}"
    return debs[0]


def _dpkg(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    force = ["--force-not-root"] if os.geteuid() != 0 else []
    return subprocess.run(
        ["dpkg", f"--root={root}", *force, "--force-depends", "--no-triggers", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _no_window(app: subprocess.Popen[str], output: Path, data: Path) -> str:
    """Why the app showed no window, as far as it said: whether it ended, and the end of its output and logs."""
    ended = app.poll()
    state = "it is still running" if ended is None else f"it ended with exit code {ended}"
    said = [f"--- {output.name}", *output.read_text(errors="replace").splitlines()[-30:]]
    for log_file in sorted((data / "logs").glob("*")):
        said += [f"--- {log_file.name}", *log_file.read_text(errors="replace").splitlines()[-30:]]
    return (
        "the installed app showed no window within 90 s; " + state + "\n" + "\n".join(said + _display_now())
    )


def _display_now() -> list[str]:
    """Whether the X display answers now, how many clients it has, and its server's log: an app that could not
    connect to it tells apart a display that went away from one that refused this client."""
    info = subprocess.run(["xdpyinfo"], capture_output=True, text=True, timeout=30)
    clients = subprocess.run(["xlsclients", "-a"], capture_output=True, text=True, timeout=30)
    said = [
        f"--- the display {os.environ.get('DISPLAY')} now: xdpyinfo exit code {info.returncode}"
        f" {info.stderr.strip()[:300]}; xlsclients lists {len(clients.stdout.splitlines())} clients",
        *clients.stdout.splitlines()[-40:],
    ]
    log = Path(os.environ.get("TENANT_EVENTS_TEST_XVFB_LOG", "/nonexistent"))
    if log.is_file():
        said += ["--- Xvfb log", *log.read_text(errors="replace").splitlines()[-30:]]
    return said


def test_the_package_says_what_it_is_and_holds_the_desktop_files(frozen_dist: Path):
    deb = _deb(frozen_dist)
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    assert deb.name == f"tenant-events_{__version__}_{arch}.deb"
    fields = dict(
        line.split(": ", 1)
        for line in subprocess.run(
            ["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        if ": " in line and not line.startswith(" ")
    )
    assert fields["Package"] == "tenant-events" and fields["Version"] == __version__
    assert fields["Architecture"] == arch
    assert "libegl1" in fields["Depends"] and "libc6 (>= " in fields["Depends"]
    installed_kib = int(fields["Installed-Size"])
    _, engine = bundle_sizes(frozen_dist / "TenantEvents")  # the archive's engine: bounded on its own
    app_kib = installed_kib - engine // 1024
    assert 50 * 1024 < app_kib < APP_GOAL_MIB * 1024, (
        f"installs {app_kib / 1024:.0f} MiB besides the archive's engine (goal < {APP_GOAL_MIB} MiB)"
    )

    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    for path in (
        "./opt/tenant-events/TenantEvents",
        "./usr/bin/tenant-events -> ../../opt/tenant-events/TenantEvents",
        f"./usr/share/applications/{APP_ID}.desktop",
        f"./usr/share/metainfo/{APP_ID}.metainfo.xml",
        f"./usr/share/icons/hicolor/48x48/apps/{APP_ID}.png",
        f"./usr/share/icons/hicolor/scalable/apps/{APP_ID}.svg",
    ):
        assert path in listing, f"{path} is not in the package"
    assert "root/root" in listing and "install.sh" not in listing


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs the X display ./run test provides")
def test_installed_from_the_package_it_starts_opens_a_link_and_removes_cleanly(
    frozen_dist: Path, tmp_path: Path
):
    deb = _deb(frozen_dist)
    root = tmp_path / "root"
    admin = root / "var" / "lib" / "dpkg"
    for sub in ("info", "updates", "triggers"):
        (admin / sub).mkdir(parents=True)
    (admin / "status").touch()
    (admin / "available").touch()
    (root / "var" / "log").mkdir(parents=True)

    done = _dpkg(root, "-i", str(deb))
    assert done.returncode == 0, done.stdout + done.stderr
    desktop = root / "usr" / "share" / "applications" / f"{APP_ID}.desktop"
    metainfo = root / "usr" / "share" / "metainfo" / f"{APP_ID}.metainfo.xml"
    text = desktop.read_text()
    assert "Exec=tenant-events %U" in text and "MimeType=x-scheme-handler/tenant-events;" in text
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip(), check.stdout + check.stderr
    if shutil.which("appstreamcli"):
        check = subprocess.run(
            ["appstreamcli", "validate", "--no-net", str(metainfo)], capture_output=True, text=True
        )
        assert check.returncode == 0, check.stdout + check.stderr

    command = root / "usr" / "bin" / "tenant-events"
    env = frozen_env(
        DISPLAY=os.environ["DISPLAY"],
        TENANT_EVENTS_LOG_JSON="1",
        DBUS_SESSION_BUS_ADDRESS=os.environ.get("DBUS_SESSION_BUS_ADDRESS", ""),
    )
    version = subprocess.run([str(command), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip() == f"tenant-events {__version__}", (
        version.stderr
    )

    data = tmp_path / "data"
    output = tmp_path / "app-output.txt"
    with output.open("w") as out:
        app = subprocess.Popen(
            [str(command), "--data-dir", str(data)], env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
    try:
        deadline = time.monotonic() + bound(90)
        windows = ""
        while time.monotonic() < deadline and app.poll() is None and not windows:
            windows = subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--pid", str(app.pid)], capture_output=True, text=True
            ).stdout.strip()
            time.sleep(0.2)  # polling another process's windows
        assert windows, _no_window(app, output, data)
        link = subprocess.run(
            [str(command), "--data-dir", str(data), "tenant-events://alert/demo/1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert link.returncode == 0 and "already running" in link.stderr, link.stderr[-2000:]
        bad = subprocess.run(
            [str(command), "--data-dir", str(data), "tenant-events://alert/../x"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bad.returncode == 2 and "not an alert link" in bad.stderr, bad.stderr[-2000:]
        assert app.poll() is None, "the running app must keep running"
    finally:
        app.send_signal(signal.SIGTERM)
        try:
            app.wait(timeout=30)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
    assert app.returncode == 0

    done = _dpkg(root, "-r", "tenant-events")
    assert done.returncode == 0, done.stdout + done.stderr
    left = [p for p in (root / "opt").rglob("*") if not p.is_dir()] + [
        p for p in (root / "usr").rglob("*") if not p.is_dir()
    ]
    assert not left, f"removing the package left files behind: {left[:10]}"
