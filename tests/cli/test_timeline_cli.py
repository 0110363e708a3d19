"""`tenant-events timeline` and `reindex` as a user runs them, on events streamed from the real simulator.

The simulator is seeded, so its log is the same every run: the timeline of one user below was read off that log
by hand (the events whose payload names the user, in the order served) and its end state worked out from them.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx
import orjson
import pytest
from httpx_sse import connect_sse

from helpers.fixtures_engine import OLD, demo_stream
from helpers.slack import bound
from tenant_events.store import EventReader
from tenant_events.store.entity_reader import DirectoryReader

SEED, BACKLOG = 11, 600
KEN = "auth0|b0136903d08a7d65bb2c50cd"
# Ken Torvalds in the seed-11 simulator's first 600 events, as served (read off its log by hand).
KEN_EVENTS = [
    ("evt_bbkWxMLlgU85Hlrm", "user.created"),
    ("evt_yrfeSHw7izqx7IfT", "group.member.added"),  # legal-2662
    ("evt_bGi7KnqA0L9JRjfE", "group.member.added"),  # hr-3260
    ("evt_iVGDiFOrd63FyROA", "organization.member.added"),  # acme-9b20
    ("evt_fGclQMTDxmoihvv5", "organization.member.role.assigned"),  # developer in acme-9b20
    ("evt_QQI0kzmlfZVHMVlT", "user.updated"),
    ("evt_fFO9B6D5rR9Qi66e", "organization.member.added"),  # umbrella-di4v
    ("evt_XoUJIt5eOydYhxj3", "organization.member.added"),  # initech-wov1
    ("evt_3oWHG4G3KOy7Ureq", "user.updated"),
    ("evt_Goi4xiFAjAH229bj", "organization.member.role.assigned"),  # auditor in acme-9b20
    ("evt_dX2DHmhP0dQYf2yD", "organization.member.role.assigned"),  # billing in initech-wov1
    ("evt_OaSvzkI7EPwc5T1h", "user.updated"),
    ("evt_sPexPF68yajxhocy", "organization.member.added"),  # wayne-pt5c
    ("evt_ZEw8cdxydwsxcu1Z", "group.member.added"),  # a legal team's group
    ("evt_xsVG0l8iECBx3g5E", "group.member.deleted"),  # legal-2662
    ("evt_3F0UQqvznUTO26qv", "user.deleted"),
]


def simulator_log(sim, n):
    """The simulator's events as it serves them, read with a bare SSE client."""
    events = []
    headers = {"Authorization": f"Bearer {sim.mint_token()}"}
    with (
        httpx.Client(timeout=20) as client,
        connect_sse(client, "GET", sim.events_url, params={"from_timestamp": OLD}, headers=headers) as source,
    ):
        for sse in source.iter_sse():
            message = orjson.loads(sse.data) if sse.data else {}
            if "event" in message:
                events.append(message["event"])
            if len(events) == n:
                return events
    raise AssertionError(f"only {len(events)} events served")


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def streamed(tmp_path_factory):
    """600 events streamed by `tenant-events stream`, kept running until the idle indexer caught the directory up."""
    from tenant_events.simulator.testing import running_simulator

    data = tmp_path_factory.mktemp("timeline")
    db = data / "tenants" / "demo.sqlite3"
    with running_simulator(seed=SEED, backlog=BACKLOG) as sim:  # 1 s heartbeats: the writer gets idle spells
        log = simulator_log(sim, BACKLOG)
        proc = demo_stream(sim, data, "--from-timestamp", OLD)
        try:
            deadline = time.monotonic() + bound(60)
            while time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                if db.exists():
                    try:
                        with EventReader(db) as events, DirectoryReader(db) as directory:
                            if events.count() == BACKLOG and directory.watermark() >= BACKLOG:
                                break
                    except Exception:  # the file is being created
                        pass
                time.sleep(0.1)
            else:
                raise AssertionError("the directory did not catch up within 60 s")
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
    return data, log


def test_the_timeline_of_a_user_is_the_hand_checked_list_then_its_state(streamed):
    data, log = streamed
    # the same list, found mechanically in the simulator's log: every served event whose JSON names Ken's id
    assert [(e["id"], e["type"]) for e in log if f'"{KEN}"' in orjson.dumps(e).decode()] == KEN_EVENTS

    out = run_cli("timeline", f"user:{KEN}", "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    events = [line for line in lines if line.startswith("20")]
    assert [(line.rsplit("[", 1)[1].rstrip("]"), line.split("  ")[2]) for line in events] == KEN_EVENTS
    # names as they were at each event's time, as the event table says them: acme-9b20 was "Acme Foods" then
    # (its created event, seq 14); renamed "Acme Americas" and "Acme Mobility" later, which the state says
    assert (
        "  demo  organization.member.role.assigned  ken.torvalds.b013@example.com added to organization"
        " Acme Foods as developer  [evt_fGclQMTDxmoihvv5]" in events[4]
    )
    state = lines[lines.index("State at the end, in demo:") + 1 :]
    assert state[0] == f"user ken.torvalds.b013@example.com ({KEN}), Ken Torvalds"
    assert any(line.startswith("  deleted ") for line in state)
    assert "  linked to nothing now" in state  # deleting the user ended everything it was in
    ended = {
        line.split(",")[0].strip(): line.rsplit(" to ", 1)[1] for line in state if line.startswith("  was ")
    }
    assert sorted(ended) == sorted(
        [
            "was in group legal-recruiting",
            "was in group hr-mobile",
            "was in group legal-mobile",
            "was member of organization Acme Mobility",
            "was member of organization Umbrella Asia Pacific",
            "was member of organization Initech Europe",
            "was member of organization Wayne Insurance",
            "was role developer in organization Acme Mobility",
            "was role auditor in organization Acme Mobility",
            "was role billing in organization Initech Europe",
        ]
    )
    # each ended when Ken left the group, when Ken was deleted, or when the simulator deleted the organization
    # (which sends no member events: the directory's cascade)
    ends = {
        e["time"][:19].replace("T", " ") + " UTC"
        for e in log
        if e["id"] in ("evt_xsVG0l8iECBx3g5E", "evt_3F0UQqvznUTO26qv")
        or (
            e["type"] == "organization.deleted"
            and e["data"]["object"]["id"]
            in ("org_4bRLkF8fKYdMAD8f", "org_lAHCNCwPIsMCLlbU", "org_iiCwGanLMHgkj241")
        )
    }
    assert set(ended.values()) == ends and len(ends) == 5
    assert out.stderr.strip() == f"tenant-events: 16 events name user:{KEN}"


def test_jsonl_is_the_stored_messages_and_email_finds_the_same_user(streamed):
    data, log = streamed
    out = run_cli("timeline", "email:KEN.TORVALDS.B013@example.com", "--data-dir", str(data), "--jsonl", "-")
    assert out.returncode == 0, out.stderr
    messages = [orjson.loads(line) for line in out.stdout.splitlines()]
    assert [(m["event"]["id"], m["type"]) for m in messages] == KEN_EVENTS
    by_id = {e["id"]: e for e in log}
    assert all(m["event"] == by_id[m["event"]["id"]] for m in messages)  # exactly as served
    assert "State at the end, in demo:" in out.stderr  # stdout holds the messages alone


def test_an_organization_by_name_and_the_errors(streamed):
    data, log = streamed
    acme = [e for e in log if '"org_1eiMhMQ2Vcf34BFk"' in orjson.dumps(e).decode()]
    out = run_cli("timeline", "org:acme-9b20", "--data-dir", str(data), "--tenant", "demo")
    assert out.returncode == 0, out.stderr
    assert [
        line.rsplit("[", 1)[1].rstrip("]") for line in out.stdout.splitlines() if line.startswith("20")
    ] == [e["id"] for e in acme]
    bad = run_cli("timeline", "customer:42", "--data-dir", str(data))
    assert bad.returncode == 2 and "'customer:42' does not name an object" in bad.stderr
    missing = run_cli("timeline", "role:rol_nothing", "--data-dir", str(data))
    assert missing.returncode == 2 and "no stored event names role:rol_nothing in demo" in missing.stderr
    tenant = run_cli("timeline", f"user:{KEN}", "--data-dir", str(data), "--tenant", "nope")
    assert tenant.returncode == 3 and "--tenant: no stored events for 'nope'" in tenant.stderr


def test_reindex_rebuilds_the_same_directory_with_progress(streamed):
    data, _log = streamed
    before = run_cli("timeline", f"user:{KEN}", "--data-dir", str(data)).stdout
    out = run_cli("reindex", "--data-dir", str(data))
    assert out.returncode == 0, out.stderr
    assert f"tenant-events: demo: {BACKLOG:,} of {BACKLOG:,} stored events" in out.stderr
    assert (
        f"tenant-events: demo: directory and access history rebuilt from {BACKLOG:,} stored events in "
        in out.stderr
    )
    assert run_cli("timeline", f"user:{KEN}", "--data-dir", str(data)).stdout == before
