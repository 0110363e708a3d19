"""`tenant-events rules import` and `rules export --sigma`, run as a user runs them (subprocesses): imported Sigma
rules are listed as ordinary rules marked Sigma; a rule that cannot be expressed is one line on stderr naming
the file, the rule and the field or modifier, exit 3, and the settings file is byte for byte as it was; imported
rules raise alerts in a live `stream` against the simulator."""

from __future__ import annotations

import json
import signal
import time

import orjson

from helpers.fixtures_engine import cli, demo_stream
from helpers.slack import bound
from tenant_events.store import EventReader

GOOD = """title: Admin role from a script
name: admin-from-script
level: critical
logsource: {product: auth0, service: events}
detection:
  grant:
    type: organization.member.role.assigned
    data.object.role.name|contains: admin
  script:
    data.context.client.name|endswith: Script
  condition: grant and script
---
title: Deletions
name: deletions
logsource: {product: auth0, service: events}
detection:
  s:
    type: [user.deleted, group.deleted]
  condition: s
---
title: Mass deletion by one client
name: mass-deletion-by-client
level: critical
correlation:
  type: event_count
  rules: [deletions]
  group-by: [data.context.client.id]
  timespan: 10m
  condition: {gte: 10}
"""
BAD = """title: Encoded e-mail
logsource: {product: auth0, service: events}
detection:
  s:
    data.object.email|base64offset|contains: evil
  condition: s
"""


def run(*args):
    proc = cli(*args)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_import_adds_sigma_rules_that_are_listed_as_ordinary_rules(tmp_path):
    (tmp_path / "sigma").mkdir()
    (tmp_path / "sigma" / "rules.yml").write_text(GOOD)
    home = tmp_path / "home"
    code, out, err = run("rules", "import", str(tmp_path / "sigma"), "--data-dir", str(home))
    assert code == 0, err
    assert [line.split()[2] for line in out.splitlines()] == ["admin-from-script", "mass-deletion-by-client"]
    assert "2 Sigma rules imported" in err
    stored = json.loads((home / "settings.json").read_text())["alerts"]["rules"]
    assert [(e["id"], e["origin"]) for e in stored] == [
        ("admin-from-script", "sigma"),
        ("mass-deletion-by-client", "sigma"),
    ]
    code, out, err = run("rules", "--data-dir", str(home))
    assert code == 0, err
    listed = {line.split()[2]: line for line in out.splitlines()}
    assert "[Sigma]" in listed["mass-deletion-by-client"] and "critical" in listed["mass-deletion-by-client"]
    assert "[Sigma]" not in listed["mass-deletion"]
    # importing the same file again replaces those rules instead of adding copies
    code, out, _ = run("rules", "--data-dir", str(home), "import", str(tmp_path / "sigma" / "rules.yml"))
    assert code == 0 and out.count("(replaced)") == 2
    assert len(json.loads((home / "settings.json").read_text())["alerts"]["rules"]) == 2


def test_a_rule_that_cannot_be_expressed_refuses_the_import_and_leaves_the_settings_alone(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    settings = home / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "schema_version": 3,
                "alerts": {
                    "rules": [
                        {"id": "mine", "name": "Mine", "types": ["user.deleted"]},
                        {"id": "off-hours", "enabled": False},
                    ]
                },
            }
        )
    )
    before = settings.read_bytes()
    folder = tmp_path / "sigma"
    folder.mkdir()
    (folder / "a-good.yml").write_text(GOOD)
    (folder / "b-bad.yml").write_text(BAD)
    code, out, err = run("rules", "import", str(folder), "--data-dir", str(home))
    assert code == 3 and out == ""
    assert err.splitlines() == [
        f"tenant-events: {folder / 'b-bad.yml'}: Sigma rule 'Encoded e-mail': data.object.email|base64offset: the "
        "modifier base64offset is not supported (supported: contains, startswith, endswith, re, cidr, exists, "
        "all, cased) — nothing was imported"
    ]
    assert settings.read_bytes() == before
    # the rules that were there keep working
    code, out, _ = run("rules", "--check", "--data-dir", str(home))
    assert code == 0


TAKES_A_BUILTIN = """title: Role granted
name: temporary-elevation
level: high
logsource: {product: auth0, service: events}
detection:
  s: {type: group.role.assigned}
  condition: s
"""


def test_a_sigma_rule_with_a_built_in_rules_id_is_refused_and_the_built_in_stays(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    settings = home / "settings.json"
    settings.write_text(
        json.dumps(
            {
                "schema_version": 3,
                "alerts": {"rules": [{"id": "mine", "name": "Mine", "types": ["user.deleted"]}]},
            }
        )
    )
    before = settings.read_bytes()
    (tmp_path / "good.yml").write_text(GOOD)  # good rules in the same import are refused with it
    (tmp_path / "z-builtin.yml").write_text(TAKES_A_BUILTIN)
    for source in (tmp_path / "z-builtin.yml", tmp_path):
        code, out, err = run("rules", "import", str(source), "--data-dir", str(home))
        assert code == 3 and out == "", err
        assert err.splitlines() == [
            f"tenant-events: {tmp_path / 'z-builtin.yml'}: Sigma rule 'Role granted': its id 'temporary-elevation' "
            "is a built-in rule's: give the Sigma rule another name (its `name:`) — nothing was imported"
        ]
        assert settings.read_bytes() == before
    # the built-in is still itself: listed with its explanation, not marked Sigma, and passing its own fixtures
    code, out, err = run("rules", "--data-dir", str(home))
    assert code == 0, err
    [line] = [line for line in out.splitlines() if "temporary-elevation" in line]
    assert "[Sigma]" not in line
    code, out, err = run("rules", "test", "temporary-elevation", "--data-dir", str(home))
    assert code == 0, out + err


def test_export_writes_every_rule_and_importing_it_elsewhere_gives_the_same_rules(tmp_path):
    home, other = tmp_path / "home", tmp_path / "other"
    (tmp_path / "in.yml").write_text(GOOD)
    assert run("rules", "import", str(tmp_path / "in.yml"), "--data-dir", str(home))[0] == 0
    code, out, err = run("rules", "export", "--sigma", str(tmp_path / "out"), "--data-dir", str(home))
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "mass-deletion.yml" in written and "mass-deletion-by-client.yml" in written
    assert len(out.splitlines()) == len(written)
    code, _, err = run("rules", "import", str(tmp_path / "out"), "--data-dir", str(other))
    assert code == 0, err
    listing = [run("rules", "--data-dir", str(d))[1] for d in (home, other)]
    assert listing[0] == listing[1]
    stored = json.loads((other / "settings.json").read_text())["alerts"]["rules"]
    assert sorted(e["id"] for e in stored) == [
        "admin-from-script",
        "mass-deletion-by-client",
    ]  # built-ins as they are


def test_export_into_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("x")
    code, _, err = run(
        "rules", "export", "--sigma", str(tmp_path / "taken"), "--data-dir", str(tmp_path / "h")
    )
    assert code == 3 and err.strip().endswith("is not a folder — give a folder to write the rules into")


STREAMED = """title: Organization removed (Sigma)
name: sigma-org-removed
level: low
logsource: {product: auth0, service: events}
detection:
  s: {type: organization.deleted, data.object.id|startswith: org_}
  condition: s
---
title: Users removed
name: sigma-users-removed
logsource: {product: auth0, service: events}
detection:
  s: {type: [user.deleted, group.deleted]}
  condition: s
---
title: Five removals of one kind in a minute (Sigma)
name: sigma-five-removals
level: critical
correlation:
  type: event_count
  rules: [sigma-users-removed]
  group-by: [type]
  timespan: 1m
  condition: {gte: 5}
"""


def _stored(db):
    if not db.exists():
        return 0
    with EventReader(db) as reader:
        return reader.count()


def test_imported_rules_raise_alerts_in_a_live_stream(make_simulator, tmp_path):
    sim = make_simulator(heartbeat=0.2, test_purpose_every=0)  # (rules skip test events)
    (tmp_path / "settings.json").write_text(
        json.dumps({"schema_version": 3, "alerts": {"rules": [{"id": "off-hours", "enabled": False}]}})
    )
    (tmp_path / "streamed.yml").write_text(STREAMED)
    assert run("rules", "import", str(tmp_path / "streamed.yml"), "--data-dir", str(tmp_path))[0] == 0
    env = {"TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token()}
    proc = demo_stream(sim, tmp_path, "--alerts-jsonl", "-", env=env)
    deadline = time.monotonic() + bound(30)
    while sim.stats()["connections"] < 1:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    sim.emit(1, ["organization.deleted"])
    sim.emit(6, ["user.deleted"])
    db = tmp_path / "tenants" / "demo.sqlite3"
    while _stored(db) < 7:  # the stream evaluates what it stored before it exits on SIGTERM
        assert proc.poll() is None and time.monotonic() < deadline + 30, "events not stored"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    rules = [orjson.loads(line)["rule"] for line in out.splitlines()]
    assert "sigma-org-removed" in rules and "sigma-five-removals" in rules, (rules, err)
    assert rules.count("sigma-five-removals") == 1
