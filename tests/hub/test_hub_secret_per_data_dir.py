"""A hub secret belongs to its data dir and to the hub it was given for (the real keyring under ./run test):
data dir A and data dir B each have a hub tenant of the same name; A's hub is an impostor. Following A's hub
tenant sends A's password there, never B's — whichever was saved last."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from helpers.fixtures_engine import cli
from helpers.nats_hub import free_port
from helpers.slack import bound
from tenant_events.hub.credentials import add_hub_profile, remove_hub_profile
from tenant_events.paths import AppPaths
from tenant_events.tenant.sign_in import open_secret_store

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.hub,
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def test_a_hub_tenant_of_the_same_name_in_another_data_dir_never_gets_this_ones_secret(tmp_path, impostor):
    store = open_secret_store().store
    name = f"team-{uuid.uuid4().hex[:8]}"
    mine, theirs = "pw-a-" + uuid.uuid4().hex, "pw-b-" + uuid.uuid4().hex
    a, b = AppPaths.resolve(tmp_path / "a").ensure(), AppPaths.resolve(tmp_path / "b").ensure()
    fields = {"name": name, "hub_tenant": "acme", "auth": "password", "user": "viewer"}
    add_hub_profile(a, store, mine, hub_urls=[f"nats://127.0.0.1:{impostor.port}"], **fields)
    add_hub_profile(b, store, theirs, hub_urls=[f"nats://127.0.0.1:{free_port()}"], **fields)  # saved last
    proc = cli("stream", "--tenant", name, "--data-dir", str(tmp_path / "a"), env={})
    try:
        deadline = time.monotonic() + bound(30)
        while b"CONNECT" not in impostor.received:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=10)
            time.sleep(0.05)
        time.sleep(0.2)  # the rest of what it sends
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
        for paths in (a, b):
            remove_hub_profile(paths, store, name)
    received = bytes(impostor.received)
    assert theirs.encode() not in received, "data dir A's hub got data dir B's password"
    assert mine.encode() in received
