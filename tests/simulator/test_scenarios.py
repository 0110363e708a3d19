"""The simulator acts out what alert rules look for (scenario steps, a scenario file, the built-in demo), its
routine live traffic leaves all of that out, and `speed` compresses tenant time."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import datetime

import httpx
import pytest

from simulator.sse import events, read_frames, until_events
from tenant_events.simulator.scenarios import DEMO, load_scenario
from tenant_events.simulator.testing import start_simulator

ALL = {"from_timestamp": "2000-01-01T00:00:00Z"}
ADMIN_TYPES = ("group.role.assigned", "organization.member.role.assigned", "organization.group.role.assigned")


def replay(sim, n):
    with httpx.Client(timeout=30) as client:
        _r, frames = read_frames(
            client, sim.events_url, token=sim.mint_token(), params=ALL, until=until_events(n)
        )
    return events(frames)


def _wait_for(condition, what, wait_s=30.0, poll_s=0.05):
    deadline = time.monotonic() + wait_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {wait_s} s waiting for {what}"
        time.sleep(poll_s)


def seconds(e):
    return datetime.fromisoformat(e["event"]["time"].replace("Z", "+00:00")).timestamp()


@pytest.mark.parametrize(
    ("step", "options", "check"),
    [
        (
            "mass_deletion",
            {"n": 25, "over_s": 2},
            lambda es: [e["type"] for e in es].count("user.deleted") == 25,
        ),
        (
            "mass_deletion",
            {"n": 12, "of": "groups", "over_s": 0},
            lambda es: [e["type"] for e in es].count("group.deleted") == 12,
        ),
        (
            "admin_grant",
            {},
            lambda es: any(
                e["type"] == "organization.member.role.assigned"
                and e["event"]["data"]["object"]["role"]["name"] == "admin"
                for e in es
            ),
        ),
        (
            "admin_grant",
            {"to": "group"},
            lambda es: any(
                e["type"] == "group.role.assigned" and e["event"]["data"]["object"]["role"]["name"] == "admin"
                for e in es
            ),
        ),
        (
            "org_connection",
            {"action": "removed"},
            lambda es: es[-1]["type"] == "organization.connection.removed",
        ),
        ("org_deleted", {"n": 2}, lambda es: [e["type"] for e in es].count("organization.deleted") == 2),
        (
            "signup_burst",
            {"n": 70, "over_s": 1},
            lambda es: [e["type"] for e in es].count("user.created") >= 70,
        ),
        (
            "off_hours",
            {"n": 4, "over_s": 0},
            lambda es: (
                sum(
                    e["type"] in {"organization.updated", "group.updated", "organization.member.role.deleted"}
                    for e in es
                )
                == 4
            ),
        ),
    ],
)
def test_each_step_emits_what_its_rule_looks_for(make_simulator, step, options, check):
    sim = make_simulator(seed=3)
    started = time.monotonic()
    result = sim.scenario(step, **options)
    assert result["do"] == step and time.monotonic() - started >= options.get("over_s", 0) * 0.9
    got = replay(sim, result["last_seq"])
    assert check(got), Counter(e["type"] for e in got)


def test_a_step_acts_out_real_activity_never_test_events(make_simulator):
    """Every event a step emits is real: the alert rules pass test events over, so a step's event marked "test"
    raised nothing (the demo's incident or a test's alert went missing now and then)."""
    sim = make_simulator(
        seed=3, test_purpose_every=1
    )  # every other event the simulator makes is a test event
    sim.emit(3)
    routine = sim.stats()["last_seq"]
    for step, options in [
        ("org_deleted", {}),
        ("mass_deletion", {"n": 5}),
        ("org_connection", {"action": "added"}),
        ("admin_grant", {}),
        ("signup_burst", {"n": 3}),
        ("off_hours", {"n": 2}),
    ]:
        last = sim.scenario(step, **options, over_s=0)["last_seq"]
    got = replay(sim, last)
    assert [e["event"].get("xpurpose") for e in got[:routine]] == ["test"] * routine
    assert [e["type"] for e in got[routine:] if e["event"].get("xpurpose") is not None] == []


def test_bad_steps_are_refused_with_the_field_named(make_simulator, tmp_path):
    sim = make_simulator()
    with pytest.raises(ValueError, match="do must be one of mass_deletion, admin_grant"):
        sim.scenario("nuke")
    with pytest.raises(ValueError, match="n must be a whole number from 1 to 100000"):
        sim.scenario("mass_deletion", n=0)
    with pytest.raises(ValueError, match="to must be one of member, group, org_group"):
        sim.scenario("admin_grant", to="root")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"steps": [{"at": 5, "do": "org_deleted"}, {"at": -1, "do": "org_deleted"}]}))
    with pytest.raises(ValueError, match="scenario step 2: at must be a number of seconds >= 0"):
        start_simulator(scenario=str(bad))


def test_routine_live_traffic_leaves_out_the_incidents_and_speed_compresses_time(make_simulator):
    started = time.monotonic()
    sim = make_simulator(seed=11, rate=2.0, burst_every=30.0, burst_size=25, speed=60.0)
    time.sleep(5.5)  # 330 tenant seconds: ~660 events plus 11 bursts
    last = sim.stats()["last_seq"]
    took = (
        time.monotonic() - started
    )  # the simulator ran no longer than this (a loaded machine: longer than 5.5 s)
    got = replay(sim, last)
    types = Counter(e["type"] for e in got)
    assert sum(types.values()) > 600
    assert not types.keys() & {
        "organization.deleted",
        "organization.connection.added",
        "organization.connection.removed",
    }
    grants = [e for e in got if e["type"] in ADMIN_TYPES]
    assert grants and all(e["event"]["data"]["object"]["role"]["name"] != "admin" for e in grants)
    span = seconds(got[-1]) - seconds(got[0])
    assert 250 < span < 60 * took + 70, (span, took)  # tenant time, 60 times the wall time it ran


def test_a_full_live_mix_and_the_backlog_keep_every_kind(make_simulator):
    sim = make_simulator(seed=11, rate=2.0, speed=200.0, live_mix="full", backlog=3000)
    types: set[str] = set()

    def every_kind_seen() -> bool:  # the backlog has them all; a loaded machine may take longer to serve it
        types.update(e["type"] for e in replay(sim, sim.stats()["last_seq"]))
        return len(types) >= 22

    _wait_for(every_kind_seen, "all 22 event types", poll_s=0.5)
    assert len(types) == 22


def test_a_scenario_file_plays_on_the_tenant_clock(make_simulator, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [{"at": 60, "do": "org_deleted"}, {"at": 30, "do": "admin_grant"}]}))
    sim = make_simulator(scenario=str(plan), speed=30.0)
    started = time.monotonic()
    got: list[dict] = []
    while not got or got[-1]["type"] != "organization.deleted":
        assert time.monotonic() - started < 10, "the scenario did not play"
        time.sleep(0.05)
        if (last := sim.stats()["last_seq"]) and last > len(got):
            got = replay(sim, last)
    assert 1.5 < time.monotonic() - started < 6  # 60 tenant seconds at speed 30
    types = [e["type"] for e in got]
    assert types.index("organization.member.role.assigned") < types.index("organization.deleted")


def test_what_a_step_acts_on_was_announced_with_its_names(make_simulator):
    """An empty tenant's admin grant: the user, the organization and the membership it needs come first as the
    events the service would have sent (user.created with the user's email and the connection signed up with,
    organization.created with its names), so the alert about it can name them."""
    sim = make_simulator(seed=3)
    result = sim.scenario("admin_grant")
    got = replay(sim, result["last_seq"])
    assert [e["type"] for e in got][-1] == "organization.member.role.assigned"
    grant = got[-1]["event"]["data"]["object"]
    before = [e["event"]["data"] for e in got[:-1]]
    users = {d["object"]["user_id"]: d for d in before if "email" in d["object"]}
    assert grant["user"]["user_id"] in users
    signed_up = users[grant["user"]["user_id"]]
    assert signed_up["object"]["email"].endswith("@example.com")
    connection = signed_up["context"]["connection"]
    assert connection["name"] == signed_up["object"]["identities"][0]["connection"]
    assert connection["id"].startswith("con_") and connection["strategy"]
    orgs = {d["object"]["id"]: d["object"] for d in before if "display_name" in d["object"]}
    assert orgs[grant["organization"]["id"]]["display_name"]


def test_the_demo_shows_an_incident_within_its_first_minute():
    steps = load_scenario("demo")
    assert len(steps) == len(DEMO) and steps[0].at <= 60 and steps[0].do == "admin_grant"
    assert {s.do for s in steps} >= {
        "admin_grant",
        "org_connection",
        "mass_deletion",
        "signup_burst",
        "org_deleted",
    }


def test_the_cli_refuses_a_bad_scenario_or_speed_naming_it(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).with_name("tenant-events"))
    bad = tmp_path / "plan.json"
    bad.write_text(json.dumps({"steps": [{"at": 5, "do": "admin_grant", "to": "everyone"}]}))
    for flags, text in [
        (["--scenario", str(bad)], "scenario step 1: to must be one of member, group, org_group"),
        (["--scenario", str(tmp_path / "missing.json")], "No such file or directory"),
        (["--speed", "0"], "speed must be > 0 and at most 1000, got 0.0"),
    ]:
        proc = subprocess.run(
            [exe, "simulator", "--ephemeral", "--port", "0", *flags],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 3 and "tenant-events: simulator: " in proc.stderr and text in proc.stderr, (
            proc.stderr
        )
