"""State survives a restart of the same data dir; generated tenant life stays consistent."""

from __future__ import annotations

import stat

import httpx

from helpers.browser import act_as_browser
from simulator.oauth_client import authorize_url, exchange, pkce_pair, query, refresh
from simulator.sse import events, read_frames, until_events

ALL = {"from_timestamp": "2000-01-01T00:00:00Z"}


def replay(sim, n):
    with httpx.Client(timeout=20) as client:
        _r, frames = read_frames(
            client, sim.events_url, token=sim.mint_token(), params=ALL, until=until_events(n)
        )
    return events(frames)


def test_restart_keeps_key_log_offsets_and_refresh_families(make_simulator, tmp_path):
    first = make_simulator(data_dir=tmp_path, backlog=100)
    first.emit(5)
    before = replay(first, 105)
    old_token = first.mint_token()
    secret = first.service_client_secret
    verifier, challenge = pkce_pair()
    code = query(act_as_browser(authorize_url(first, challenge=challenge), deliver=False))["code"]
    rt = exchange(first, code, verifier).json()["refresh_token"]
    first.stop()
    assert stat.S_IMODE((tmp_path / "signing-key.pem").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "simulator.sqlite3").stat().st_mode) == 0o600

    port = int(first.auth_url.rsplit(":", 1)[1])
    # Same port, so issuer and audience (which contain it) are the same as before.
    second = make_simulator(data_dir=tmp_path, backlog=100, port=port)  # backlog already there: nothing added
    assert second.stats()["last_seq"] == 105
    assert replay(second, 105) == before, "same events at the same offsets"
    with httpx.Client(timeout=5) as client:
        r, _ = read_frames(client, second.events_url, token=old_token, until=lambda fs: True)
    assert r.status_code == 200, "the signing key persisted"
    assert second.service_client_secret == secret
    assert refresh(second, rt).status_code == 200, "refresh-token families persisted"
    second.emit(3)
    after = replay(second, 108)
    assert len({e["event"]["id"] for e in after}) == 108, "new ids never collide with old ones"


def test_same_seed_same_events(make_simulator):
    a = replay(make_simulator(seed=5, backlog=300), 300)
    b = replay(make_simulator(seed=5, backlog=300), 300)

    def shape(e):  # everything but timestamps (the backlog ends "now")
        obj = e["event"]["data"]["object"]
        return e["type"], e["offset"], e["event"]["id"], obj.get("id") or obj.get("user_id"), sorted(obj)

    assert [shape(e) for e in a] == [shape(e) for e in b]


def test_tenant_life_is_consistent(make_simulator):
    """Members are only removed after being added, deleted users are never referenced again, etc."""
    got = replay(make_simulator(seed=9, backlog=6000), 6000)
    users: set[str] = set()
    org_members: set[tuple[str, str]] = set()
    group_members: set[tuple[str, str]] = set()
    orgs: set[str] = set()
    groups: set[str] = set()
    for e in got:
        t, obj = e["type"], e["event"]["data"]["object"]
        if t == "user.created":
            assert obj["user_id"] not in users
            users.add(obj["user_id"])
        elif t in ("user.updated", "user.deleted"):
            assert obj["user_id"] in users, t
            if t == "user.deleted":
                users.discard(obj["user_id"])
                org_members = {m for m in org_members if m[1] != obj["user_id"]}
                group_members = {m for m in group_members if m[1] != obj["user_id"]}
        elif t == "organization.created":
            orgs.add(obj["id"])
        elif t in ("organization.updated", "organization.deleted"):
            assert obj["id"] in orgs
            if t == "organization.deleted":
                orgs.discard(obj["id"])
        elif t == "organization.member.added":
            key = (obj["organization"]["id"], obj["user"]["user_id"])
            assert key not in org_members and key[1] in users and key[0] in orgs
            org_members.add(key)
        elif t == "organization.member.deleted":
            key = (obj["organization"]["id"], obj["user"]["user_id"])
            assert key in org_members
            org_members.discard(key)
        elif t == "group.created":
            groups.add(obj["id"])
        elif t == "group.deleted":
            assert obj["id"] in groups
            groups.discard(obj["id"])
        elif t == "group.member.added":
            key = (obj["group"]["id"], obj["member"]["id"])
            assert key not in group_members and key[1] in users and key[0] in groups
            group_members.add(key)
        elif t == "group.member.deleted":
            key = (obj["group"]["id"], obj["member"]["id"])
            assert key in group_members
            group_members.discard(key)
    assert users and orgs and groups


def test_the_backlog_ends_now_and_live_events_come_after_it_in_time(make_simulator):
    sim = make_simulator(seed=7, backlog=300, rate=0)  # the seed whose backlog ran ~5 s past its start
    sim.emit(5)
    times = [e["event"]["time"] for e in replay(sim, 305)]
    assert times == sorted(times), "an event after one newer than itself"
