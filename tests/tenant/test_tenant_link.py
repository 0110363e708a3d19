"""TenantLink, the facade the app and the CLI share, without Qt: the real simulator subprocess, real SQLite files.

Commit notifications carry seq ranges that tile the stored rows exactly (duplicates sent by the server
included); the settings' alert rules run on every commit and reach the `on_alerts` observers; a stored sign-in
is restored by a second link after a browser sign-in; a bad rule stops a link before it starts.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from helpers.browser import act_as_browser
from helpers.fixtures_engine import OLD
from helpers.slack import bound
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.from_settings import BadRules
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.errors import SignInRequired
from tenant_events.paths import AppPaths
from tenant_events.settings import make_profile
from tenant_events.store import EventFilter
from tenant_events.tenant.committed_rows import CommittedRows
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.sources import AccessToken, StreamFrom, of_profile
from tenant_events.values.stream_states import StreamState

QUIET_CLOCK = AlertSettings(rules=[{"id": "off-hours", "enabled": False}])  # whatever the hour of the run


async def _until(check, what, limit=30.0):
    for _ in range(int(bound(limit) / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _profile(sim, name):
    return make_profile(
        name=name,
        domain=sim.auth_url.split("//")[1],
        auth_url=sim.auth_url,
        base_url=sim.base_url,
        client_id=sim.demo_client_id,
    )


def test_commit_ranges_tile_the_stored_rows_and_alerts_reach_the_observer(make_simulator, tmp_path):
    sim = make_simulator(
        backlog=400, heartbeat=0.2, rate=0.0, test_purpose_every=0
    )  # (rules skip test events)
    paths = AppPaths.resolve(tmp_path).ensure()
    source = StreamFrom(sim.base_url, AccessToken(sim.mint_token()), from_timestamp=OLD)
    ranges: list[CommittedRows] = []
    steps = []

    async def scenario():
        async with TenantLink("acme", paths, source, alerts=QUIET_CLOCK) as link:
            link.on_commit.append(ranges.append)
            link.on_alerts.append(steps.append)
            await link.start()
            assert link.running and link.monitor is not None
            await _until(lambda: link.state.state is StreamState.LIVE, "live")
            sim.faults(duplicate_every=2)  # every 2nd event is sent twice: seqs in a range may have no row
            sim.emit(30, ["user.deleted"])
            sim.emit(1, ["organization.deleted"])
            await _until(lambda: link.stats.events_stored >= 431, "431 stored")
            await _until(
                lambda: {a.rule_id for r in steps for a in r.raised} >= {"mass-deletion", "org-deleted"},
                "both alerts observed",
            )
            await link.stop()
            assert not link.running and link.monitor is None and link.state.state is StreamState.STOPPED
            with link.open_reader() as reader:
                return [e.seq for e in reader.newer_than(EventFilter(), 0, limit=10_000)], link.stats

    seqs, stats = asyncio.run(scenario())
    assert len(seqs) == 431 and stats.duplicates_dropped > 0
    # Ranges follow each other without a hole or an overlap, and each stored row lies in exactly one.
    assert ranges and all(r.tenant == "acme" for r in ranges)
    assert all(b.after_seq == a.last_seq for a, b in itertools.pairwise(ranges))
    assert ranges[0].after_seq < min(seqs) and ranges[-1].last_seq == max(seqs)
    assert all(sum(seq in r for r in ranges) == 1 for seq in seqs)
    assert sum(r.inserted for r in ranges) == len(seqs)
    raised = sorted(a.rule_id for r in steps for a in r.raised)
    # The backlog raises rules of its own; these two were raised once each, the sent-twice events changed nothing.
    assert raised.count("mass-deletion") == 1 and raised.count("org-deleted") == 1


def test_a_bad_rule_stops_the_link_before_it_starts(tmp_path):
    paths = AppPaths.resolve(tmp_path).ensure()
    bad = AlertSettings(rules=[{"id": "signup-burst", "threshold": {"count": 60, "window_seconds": -1}}])
    source = StreamFrom("http://127.0.0.1:9/api/v2", AccessToken("token"))
    with pytest.raises(BadRules):
        TenantLink("acme", paths, source, alerts=bad)
    lenient = TenantLink("acme", paths, source, alerts=bad, strict_rules=False)  # the app runs the valid ones
    assert lenient.rules is not None and lenient.on_alerts is lenient.rules.on_alerts
    assert not paths.database_file("acme").exists()


def test_sign_in_is_restored_by_the_next_link_and_sign_out_forgets_it(make_simulator, tmp_path):
    sim = make_simulator(backlog=20, heartbeat=0.2, rate=0.0)
    paths = AppPaths.resolve(tmp_path).ensure()
    secrets = MemorySecretStore()
    profile = _profile(sim, "acme")
    browser_visits = []

    def browser(url):
        browser_visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))

    async def scenario():
        async with TenantLink("acme", paths, of_profile(profile, secrets)) as first:
            assert not first.is_signed_in
            with pytest.raises(SignInRequired):
                await first.start()  # nothing stored yet: no browser is opened by start()
            assert not browser_visits and not paths.database_file("acme").exists()
            result = await first.sign_in(browser)
            await asyncio.gather(*browser_visits)
            assert first.is_signed_in and first.user == result.user.display_name
            await first.start()
            await _until(lambda: first.stats.events_stored >= 20, "the first link's backlog")
        assert secrets.get(first.sign_in_state.slot.key), "the refresh token was stored"
        async with TenantLink("acme", paths, of_profile(profile, secrets)) as second:
            ranges = []
            second.on_commit.append(ranges.append)
            await second.start()  # restores the stored sign-in, no browser
            assert second.is_signed_in and len(browser_visits) == 1
            sim.emit(5)
            await _until(
                lambda: sum(r.inserted for r in ranges) >= 5, "new events through the restored sign-in"
            )
            assert (
                second.open_readers() and second.ui_reader is not None and second.ui_reader.head_seq() >= 25
            )
            problem = await second.sign_out()
            assert problem is None and not second.is_signed_in and not second.running
        assert secrets.get(first.sign_in_state.slot.key) is None

    asyncio.run(scenario())


def test_rules_set_while_following_evaluate_what_is_stored_and_what_comes(make_simulator, tmp_path):
    """The rules editor saves: a link that ran no rules starts with the stored events, then follows commits."""
    sim = make_simulator(backlog=0, heartbeat=0.2, rate=0.0, test_purpose_every=0)  # (rules skip test events)
    paths = AppPaths.resolve(tmp_path).ensure()
    steps = []

    async def scenario():
        source = StreamFrom(sim.base_url, AccessToken(sim.mint_token()), from_timestamp=OLD)
        async with TenantLink("acme", paths, source) as link:
            link.on_alerts.append(steps.append)
            await link.start()
            await _until(lambda: link.state.state is StreamState.LIVE, "live")
            sim.emit(1, ["organization.deleted"])
            await _until(lambda: link.stats.events_stored >= 1, "the first deletion stored")
            assert link.rules is None and steps == []
            link.set_alert_rules(QUIET_CLOCK)
            await _until(lambda: steps, "the stored deletion evaluated")
            sim.emit(30, ["user.deleted"])
            await _until(
                lambda: any(a.rule_id == "mass-deletion" for r in steps for a in r.raised), "mass deletion"
            )

    asyncio.run(scenario())
    assert sorted(a.rule_id for r in steps for a in r.raised) == ["mass-deletion", "org-deleted"]
