"""A tenant saved from a team hub (what "Connect to a team hub" stores: the profile in the settings, the secret
in the system keyring) is followed by `stream --tenant NAME` with no credentials given: the viewer reads the
keyring, connects to the hub and stores what the relay published."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from helpers.fixtures_engine import OLD, reference_ids
from helpers.hub_cli import HubCli, export_ids, wait_stored
from tenant_events.auth.secret_store import open_secret_store
from tenant_events.hub.credentials import add_hub_profile, check_hub, hub_options, remove_hub_profile
from tenant_events.paths import AppPaths

pytestmark = [pytest.mark.hub, pytest.mark.dbus]


def test_stream_follows_a_saved_hub_profile_with_its_secret_from_the_keyring(
    simulator, nats_single, tmp_path
):
    if os.environ.get("TENANT_EVENTS_REAL_KEYRING") != "1":
        pytest.skip("TENANT_EVENTS_REAL_KEYRING is not set: run via ./run test (gnome-keyring on D-Bus)")
    hub, sim = nats_single, simulator
    sim.emit(150)
    relay = HubCli(
        "relay",
        "--base-url",
        sim.base_url,
        "--from-timestamp",
        OLD,
        "--data-dir",
        str(tmp_path / "r"),
        "--hub",
        hub.urls,
        "--hub-tenant",
        "acme",
        "--hub-user",
        "collector",
        env={
            "TENANT_EVENTS_ACCESS_TOKEN": sim.mint_token(ttl=3600),
            "TENANT_EVENTS_HUB_PASSWORD": hub.credentials.collector,
        },
    )
    paths = AppPaths.resolve(str(tmp_path / "v")).ensure()
    store = open_secret_store().store
    name = f"acme-{uuid.uuid4().hex[:6]}"
    viewer = None
    try:
        relay.wait_for("leader: holds")
        profile = add_hub_profile(
            paths,
            store,
            hub.credentials.viewer,
            name=name,
            hub_urls=hub.urls.split(","),
            hub_tenant="acme",
            auth="password",
            user="viewer",
        )
        options = hub_options(profile, store, paths.data_dir)
        assert asyncio.run(check_hub(options, "acme")).stream == "TENANT_EVENTS_ACME"
        viewer = HubCli("stream", "--tenant", name, "--data-dir", str(tmp_path / "v"), env={})
        wait_stored(tmp_path / "v" / "tenants" / f"{name}.sqlite3", 150, who=viewer)
        assert viewer.stop() == 0
        assert hub.credentials.viewer not in viewer.text()
    finally:
        relay.stop()
        if viewer is not None and viewer.proc.poll() is None:
            viewer.stop()
        remove_hub_profile(paths, store, name)
    assert export_ids(tmp_path / "v") == reference_ids(sim, 150)
