"""`frozen_app`: the PyInstaller bundle built once per session by packaging/build.sh (what `./run build` runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.frozen import ROOT


@pytest.fixture(scope="session")
def frozen_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    env = dict(
        os.environ,
        DIST_DIR=str(dist),
        BUILD_DIR=str(tmp_path_factory.mktemp("build")),
        # a cache of its own: PyInstaller's --clean empties the shared one under another build's feet
        PYINSTALLER_CONFIG_DIR=str(tmp_path_factory.mktemp("pyinstaller-cache")),
        PYTHON_BIN=sys.executable,
        NO_TARBALL="1",  # nothing here unpacks it: the tests install the bundle and the package
    )
    proc = subprocess.run(
        ["bash", "packaging/build.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return dist


@pytest.fixture(scope="session")
def frozen_app(frozen_dist: Path) -> Path:
    binary = frozen_dist / "TenantEvents" / "TenantEvents"
    assert binary.is_file() and os.access(binary, os.X_OK)
    return binary
