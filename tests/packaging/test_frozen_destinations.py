"""The installed app sends alerts through Apprise: its services are found inside the bundle (Apprise lists a
plugins folder at run time) and a webhook test alert arrives, with the URL kept in the real keyring."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from helpers.frozen import frozen_env

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def _run(app: Path, home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(app), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=frozen_env(TENANT_EVENTS_HOME=str(home)),
    )


def test_frozen_destinations_deliver_a_test_alert(frozen_app: Path, tmp_path: Path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    name = f"frozen-{uuid.uuid4().hex[:6]}"
    added = _run(
        frozen_app, tmp_path, "destinations", "add", name, stdin=f"json://127.0.0.1:{httpserver.port}/hook\n"
    )
    assert added.returncode == 0, added.stderr
    try:
        tested = _run(frozen_app, tmp_path, "destinations", "test", name)
        assert tested.returncode == 0, tested.stderr
        assert tested.stdout.strip() == f"destination {name}: test alert delivered"
        assert tested.stderr == ""  # no warning about optional parts left out of the bundle
        assert [r.path for r, _ in httpserver.log] == ["/hook"]
        unknown = _run(frozen_app, tmp_path, "destinations", "add", "x", stdin="nope://what\n")
        assert unknown.returncode == 3 and "nope:// is not a service Apprise knows" in unknown.stderr
    finally:
        _run(frozen_app, tmp_path, "destinations", "remove", name)
