"""The user-level Linux install from the bundle: menu entry, icons, a runnable command; uninstall undoes it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from helpers.frozen import frozen_env

APP_ID = "io.github.tenantevents.TenantEvents"


def test_install_then_uninstall(frozen_app: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    env = frozen_env(HOME=str(home))
    env.pop("XDG_DATA_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)
    bundle = frozen_app.parent
    proc = subprocess.run(
        ["bash", str(bundle / "install.sh")], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr

    data = home / ".local" / "share"
    desktop = data / "applications" / f"{APP_ID}.desktop"
    installed = home / ".local" / "opt" / "TenantEvents" / "TenantEvents"
    assert desktop.is_file() and installed.is_file()
    text = desktop.read_text()
    assert f"Exec={installed} %U" in text and f"Icon={APP_ID}" in text
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
    for size in (16, 48, 256):
        assert (data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    assert (data / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    command = home / ".local" / "bin" / "tenant-events"
    version = subprocess.run([str(command), "--version"], env=env, capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("tenant-events "), version.stderr

    proc = subprocess.run(
        ["bash", str(installed.parent / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert not desktop.exists() and not installed.exists() and not command.exists()
    assert not list((data / "icons").rglob(f"{APP_ID}.*"))
