"""Running the frozen app in tests: a clean environment and the bundled simulator as a child process."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def frozen_env(**extra: str) -> dict[str, str]:
    """The environment a desktop session would give the app: no venv, no source tree on the path."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "TENANT_EVENTS_"))
    }
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    env.update(extra)
    return env


# The bundle's size goal, and what the archive's engine may add to it: DuckDB and its DuckLake and PostgreSQL
# extensions ship whole (nothing downloads at run time), as large as their wheels are.
APP_GOAL_MIB = 150
ARCHIVE_ENGINE_GOAL_MIB = 140


def bundle_sizes(bundle: Path) -> tuple[int, int]:
    """(bytes of the app, bytes of the archive's engine) in an unpacked bundle, each file counted once."""
    app = engine = 0
    for path in bundle.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        parts = path.relative_to(bundle).parts
        is_engine = path.name.startswith("_duckdb.") or any(p.startswith("duckdb_extension_") for p in parts)
        if is_engine:
            engine += path.stat().st_size
        else:
            app += path.stat().st_size
    return app, engine


@dataclass
class FrozenSimulator:
    proc: subprocess.Popen[str]
    base_url: str
    auth_url: str
    service_client_id: str
    service_secret: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_frozen_simulator(binary: Path, data_dir: Path, **flags: object) -> FrozenSimulator:
    """`TenantEvents simulator --port 0 ...` from the bundle; returns once it printed its ready lines."""
    args = [str(binary), "simulator", "--port", "0", "--data-dir", str(data_dir)]
    for key, value in flags.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    proc = subprocess.Popen(
        args, env=frozen_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "service client" in line:
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(90) or proc.poll() is not None:
        proc.kill()
        raise AssertionError(f"frozen simulator did not start: {''.join(lines)[-2000:]}")
    text = "".join(lines)
    base = re.search(r"base_url=(\S+)", text)
    auth = re.search(r"auth_url=(\S+)", text)
    service = re.search(r"id=(\S+) secret=(\S+)", text)
    assert base and auth and service, text
    return FrozenSimulator(proc, base.group(1), auth.group(1), service.group(1), service.group(2))
