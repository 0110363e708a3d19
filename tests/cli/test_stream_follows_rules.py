"""A running `tenant-events stream` takes in the alert rules saved to the settings file meanwhile, as a user who
imports Sigma rules into a stream that runs as a service would expect: the rules run from then on and a line
says so; rules that are not valid leave the rules before running, with a line saying why."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from helpers.fixtures_engine import cli, demo_stream_args
from helpers.hub_cli import HubCli
from helpers.stream_kill import counter, stored
from helpers.team_alerts import wait_until

RENAMED = """title: Organization renamed
name: org-renamed
level: high
logsource: {product: auth0, service: events}
detection:
  s: {type: organization.updated}
  condition: s
"""


def _line(proc: HubCli, text: str) -> str:
    """The newest stderr line holding `text`, once there is one."""
    proc.wait_for(text)
    return [line for line in proc.lines if text in line][-1]


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
    proc = HubCli(*demo_stream_args(sim, tmp_path), env={"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()})
    db = tmp_path / "tenants" / "demo.sqlite3"
    try:
        wait_until(
            lambda: db.exists() and counter(db, "alerts_upto") >= 0 and sim.stats()["connections"] == 1,
            "a stream",
            [proc],
        )

        # before the import: an organization renamed is not an alert
        sim.emit(1, ["organization.updated"])
        wait_until(
            lambda: stored(db) >= 1 and counter(db, "alerts_upto") >= stored(db),
            "the event evaluated",
            [proc],
        )
        assert proc.count("Organization renamed") == 0

        (tmp_path / "renamed.yml").write_text(RENAMED)
        imported = cli("rules", "import", str(tmp_path / "renamed.yml"), "--data-dir", str(tmp_path))
        _out, import_err = imported.communicate(timeout=60)
        assert imported.returncode == 0, import_err
        line = _line(proc, "alert rules changed in the settings file")
        assert line.startswith("tenant-events: the alert rules changed in the settings file: ")
        assert line.endswith(" rules run from now on")

        sim.emit(1, ["organization.updated"])
        alert = _line(proc, "Organization renamed")
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
        refused = _line(proc, "were not taken in")
        assert refused.startswith(
            "tenant-events: the alert rules saved to the settings file were not taken in (the rules before keep "
            "running): alert rule 'mine': types: 'no.such.type'"
        )
        assert settings.read_text() == json.dumps(document)  # read, never written

        sim.emit(1, ["organization.updated"])
        wait_until(lambda: _renamed(db) == 2, "the imported rule to take the next one in", [proc])
    finally:
        code = proc.stop()
    assert code == 0, proc.text()
