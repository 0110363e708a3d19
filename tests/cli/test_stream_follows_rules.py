"""A running `tenant-events stream` takes in the alert rules saved to the settings file meanwhile, as a user who
imports Sigma rules into a stream that runs as a service would expect: the rules run from then on and a line
says so; rules that are not valid leave the rules before running, with a line saying why."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from helpers.fixtures_engine import cli, demo_stream
from helpers.stream_kill import counter, stored

RENAMED = """title: Organization renamed
name: org-renamed
level: high
logsource: {product: auth0, service: events}
detection:
  s: {type: organization.updated}
  condition: s
"""


class Lines:
    """A process's stderr, read as it comes."""

    def __init__(self, pipe: object) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: object) -> None:
        for line in pipe:  # type: ignore[attr-defined]
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, proc: object, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines if text in line]
            if found:
                return found[-1]
            assert proc.poll() is None, "\n".join(self.lines)  # type: ignore[attr-defined]
            time.sleep(0.05)  # polling another process's output
        raise AssertionError(f"no line with {text!r} within {timeout} s:\n" + "\n".join(self.lines))

    def join(self) -> None:
        self._thread.join(10)


def _until(predicate: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # polling another process's database


def _renamed(db: Path) -> int:
    """How many events the imported rule's alerts hold."""
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return int(
            conn.execute(
                "SELECT coalesce(sum(event_count), 0) FROM alerts WHERE rule_id = 'org-renamed'"
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_rules_imported_while_the_stream_runs_raise_alerts_and_bad_rules_keep_the_old(
    make_simulator, tmp_path
):
    sim = make_simulator(heartbeat=0.2, test_purpose_every=0)  # (rules skip test events)
    settings = tmp_path / "settings.json"
    settings.write_text(
        json.dumps({"schema_version": 2, "alerts": {"rules": [{"id": "off-hours", "enabled": False}]}})
    )
    proc = demo_stream(sim, tmp_path)
    err = Lines(proc.stderr)
    db = tmp_path / "tenants" / "demo.sqlite3"
    try:
        _until(
            lambda: db.exists() and counter(db, "alerts_upto") >= 0 and sim.stats()["connections"] == 1,
            "a stream",
        )

        # before the import: an organization renamed is not an alert
        sim.emit(1, ["organization.updated"])
        _until(lambda: stored(db) >= 1 and counter(db, "alerts_upto") >= stored(db), "the event evaluated")
        assert not [line for line in err.lines if "Organization renamed" in line]

        (tmp_path / "renamed.yml").write_text(RENAMED)
        imported = cli("rules", "import", str(tmp_path / "renamed.yml"), "--data-dir", str(tmp_path))
        _out, import_err = imported.communicate(timeout=60)
        assert imported.returncode == 0, import_err
        line = err.wait_for("alert rules changed in the settings file", proc)
        assert line.startswith("tenant-events: the alert rules changed in the settings file: ")
        assert line.endswith(" rules run from now on")

        sim.emit(1, ["organization.updated"])
        alert = err.wait_for("Organization renamed", proc)
        assert alert.startswith("tenant-events: alert (warning): Organization renamed: Organization ")
        assert _renamed(db) == 1

        # an edit that turns the imported rule off and breaks another: one line says why, and the rules before
        # (the imported one on) keep running
        document = json.loads(settings.read_text())
        for rule in document["alerts"]["rules"]:
            if rule["id"] == "org-renamed":
                rule["enabled"] = False
        document["alerts"]["rules"].append({"id": "mine", "name": "Mine", "types": ["no.such.type"]})
        edited = tmp_path / "settings.json.new"
        edited.write_text(json.dumps(document))
        os.replace(edited, settings)  # as an editor or the app saves: whole, never half-written
        refused = err.wait_for("were not taken in", proc)
        assert refused.startswith(
            "tenant-events: the alert rules saved to the settings file were not taken in (the rules before keep "
            "running): alert rule 'mine': types: 'no.such.type'"
        )
        assert settings.read_text() == json.dumps(document)  # read, never written

        sim.emit(1, ["organization.updated"])
        _until(
            lambda: _renamed(db) == 2 or proc.poll() is not None, "the imported rule to take the next one in"
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        err.join()
    assert proc.returncode == 0, "\n".join(err.lines)
