"""--real-names serves what the vendor's own SDK (auth0-python) accepts: it yields every event, all 22 types
(docs/event-stream.md "Quirks": `a0*` names, `data.context.tenant.id`, `geo` inside `data.context.request`)."""

from __future__ import annotations

import logging

import pytest

auth0_client = pytest.importorskip("auth0.management.client")

N = 1500


def test_auth0_python_yields_every_event(make_simulator, caplog):
    sim = make_simulator(backlog=N, real_names=True, id_length=22, heartbeat=0.3)
    client = auth0_client.Auth0(base_url=sim.base_url, token=sim.mint_token())
    seen, kinds, beats = [], set(), 0
    with caplog.at_level(logging.WARNING):
        for message in client.events.subscribe(from_timestamp="2000-01-01T00:00:00Z"):
            name = type(message).__name__
            if "OffsetOnly" in name:
                beats += 1
                if beats >= 1 and len(seen) >= N:
                    break
                continue
            seen.append(message)
            kinds.add(name)
    assert len(seen) == N, "the SDK skipped events it could not parse"
    assert len(kinds) == 22
    assert not [r for r in caplog.records if "Failed to parse" in r.getMessage()]
