"""The installed app, built by PyInstaller exactly as `./run build` does, used from the command line.

One build per test session (about a minute on two cores); every test here runs the frozen binary, not the
source tree: `--version`, and the bundled simulator + `stream` + `export` end to end.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path

from helpers.frozen import (
    APP_GOAL_MIB,
    ARCHIVE_ENGINE_GOAL_MIB,
    bundle_sizes,
    frozen_env,
    start_frozen_simulator,
)
from helpers.slack import bound
from tenant_events.store import EventReader


def _stored(db: Path) -> int:
    """Events the bundle's stream has committed so far (0 while its schema is still being made)."""
    try:
        with EventReader(db) as reader:
            return reader.count()
    except Exception:
        return 0


def test_version(frozen_app: Path):
    proc = subprocess.run(
        [str(frozen_app), "--version"], capture_output=True, text=True, timeout=60, env=frozen_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"tenant-events \d+\.\d+\.\d+\n", proc.stdout)


def test_bundle_is_lean_and_complete(frozen_app: Path):
    bundle = frozen_app.parent
    # PyInstaller links libraries into _internal/; count each file once, not its links.
    app, engine = bundle_sizes(bundle)
    dangling = [p.name for p in bundle.rglob("*") if p.is_symlink() and not p.exists()]
    assert not dangling, f"links to libraries the build dropped: {dangling}"
    assert app < APP_GOAL_MIB * 2**20, (
        f"the app is {app / 2**20:.0f} MiB unpacked (goal < {APP_GOAL_MIB} MiB)"
    )
    assert engine < ARCHIVE_ENGINE_GOAL_MIB * 2**20, f"the archive's engine is {engine / 2**20:.0f} MiB"
    internal = bundle / "_internal"
    # The archive's engine and every extension file, where the store LOADs them from (nothing downloads).
    assert list(internal.glob("_duckdb.*.so")), "no DuckDB engine"
    # The archive writer's compiled token lists, and the SQLite whose tokenizer they call.
    assert list(internal.glob("tenant_events/store/_postings.*.so")), "no compiled token lists"
    assert list(internal.glob("libsqlite3.so*")), "no SQLite library"
    for extension in ("ducklake", "postgres_scanner", "httpfs"):
        files = list(
            internal.glob(f"duckdb_extension_{extension}/extensions/v*/{extension}.duckdb_extension")
        )
        assert files, f"the DuckDB {extension} extension is not in the bundle"
    # What the app needs at run time: resources, TLS trust, keyring backends, the notification library.
    assert (internal / "resources" / "icons" / "tenant-events.svg").is_file()
    assert list(internal.rglob("certifi/cacert.pem")), "no CA bundle for TLS"
    assert list(internal.rglob("keyring-*.dist-info")), "keyring metadata (backend entry points) missing"
    assert (internal / "desktop_notifier").is_dir()
    assert not list(internal.rglob("libQt6WebEngine*")) and not list(internal.rglob("libQt6Quick.so*"))
    assert (bundle / "install.sh").is_file() and (bundle / "uninstall.sh").is_file()


def test_simulator_stream_and_export_end_to_end(frozen_app: Path, tmp_path: Path):
    sim = start_frozen_simulator(frozen_app, tmp_path / "sim", backlog=0, rate=50)
    stream = None
    try:
        env = frozen_env(TENANT_EVENTS_CLIENT_SECRET=sim.service_secret)
        data = tmp_path / "data"
        stream = subprocess.Popen(
            [
                str(frozen_app),
                "stream",
                "--base-url",
                sim.base_url,
                "--client-id",
                sim.service_client_id,
                "--data-dir",
                str(data),
                "--name",
                "frozen",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        db = data / "tenants" / "frozen.sqlite3"
        deadline = time.monotonic() + bound(60)
        while time.monotonic() < deadline and not (db.exists() and db.stat().st_size > 0):
            assert stream.poll() is None, stream.communicate()[1][-2000:]
            time.sleep(0.2)
        deadline = time.monotonic() + bound(60)
        while _stored(db) <= 20:  # let live events (50/s) arrive and commit
            assert stream.poll() is None and time.monotonic() < deadline, stream.communicate()[1][-2000:]
            time.sleep(0.1)
        stream.send_signal(signal.SIGTERM)
        _out, err = stream.communicate(timeout=30)
        assert stream.returncode == 0, err[-2000:]
        stored = int(re.search(r"(\d+) events stored", err).group(1))
        assert stored > 20, err[-2000:]

        export = subprocess.run(
            [str(frozen_app), "export", "--data-dir", str(data), "--tenant", "frozen", "--jsonl", "-"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert export.returncode == 0, export.stderr
        lines = [json.loads(line) for line in export.stdout.splitlines()]
        assert len(lines) == stored
        ids = [m["event"]["id"] for m in lines]
        assert len(set(ids)) == len(ids)
        assert all(m["type"] == m["event"]["type"] and m["offset"] for m in lines)
    finally:
        if stream and stream.poll() is None:
            stream.kill()
        sim.stop()
