"""The simulated tenant's connections: a fixed set with names and strategies, users who sign up and log in through
them, and `data.context.connection{id, name, strategy}` on those events as the real service sends it — payloads
that still pass the app's own frame validation and the vendor SDK's context model."""

from __future__ import annotations

from collections import Counter

import pytest

from helpers.entity_events import envelope_row
from tenant_events.simulator.generator import TenantLife
from tenant_events.simulator.incidents import INCIDENTS
from tenant_events.simulator.world import CONNECTIONS, iso_ms

PROVIDER_PREFIX = {
    "auth0": "auth0|",
    "google-oauth2": "google-oauth2|",
    "samlp": "samlp|acme-saml|",
    "email": "email|",
}


def generated(n: int, seed: int = 5) -> tuple[list[tuple[str, dict]], TenantLife]:
    life = TenantLife(seed, tenant_id="ten_DemoTenant000001")
    out = [life.next_event(1_790_000_000 + i / 2) for i in range(n)]
    now = iso_ms(1_790_000_000 + n)
    for incident in INCIDENTS.values():  # the scenarios' own events go through the same context
        out += [
            (name, {"object": obj, "context": life._context(name, obj)}) for name, obj in incident(life, now)
        ]
    return out, life


def test_user_sign_ups_and_log_ins_name_their_connection():
    events, life = generated(4000)
    ids = {name: con_id for con_id, name, _strategy in life.connections}
    assert [(name, strategy) for _id, name, strategy in life.connections] == list(CONNECTIONS)
    used: Counter[str] = Counter()
    for i, (kind, data) in enumerate(events):
        envelope_row(kind, data, iso_ms(1_790_000_000 + i), i)  # the app's frame validation takes it
        connection = data["context"].get("connection")
        obj = data["object"]
        if kind == "user.created":
            assert connection is not None, obj
            identity = obj["identities"][0]
            assert connection == {
                "id": ids[identity["connection"]],
                "name": identity["connection"],
                "strategy": identity["provider"],
            }
            assert obj["user_id"].startswith(PROVIDER_PREFIX[identity["provider"]])
            used[connection["name"]] += 1
        elif kind == "user.updated" and connection is not None:
            assert obj["last_login"] == obj["updated_at"]  # a log-in
            assert connection["name"] == obj["identities"][0]["connection"]
        else:
            assert connection is None, (kind, connection)  # changes an admin or a client made
        if kind.startswith("organization.connection."):
            assert obj["connection"]["id"] in ids.values()
    # every connection has users; most sign up with a password
    assert set(used) == set(ids) and used.most_common(1)[0][0] == "Username-Password-Authentication", used


def test_a_tenant_keeps_its_connections_when_the_simulator_starts_again():
    first = TenantLife("7:0", tenant_id="ten_DemoTenant000001", tenant_seed=7)
    again = TenantLife("7:1500", tenant_id="ten_DemoTenant000001", tenant_seed=7)
    other = TenantLife("8:0", tenant_id="ten_DemoTenant000001", tenant_seed=8)
    assert first.connections == again.connections != other.connections
    assert first.roles == again.roles


def test_the_vendor_sdk_reads_the_context_connection():
    types = pytest.importorskip("auth0.management.types")
    events, _life = generated(600)
    contexts = [types.EventStreamCloudEventContext.model_validate(d["context"]) for _k, d in events]
    named = [c.connection for c in contexts if c.connection is not None]
    assert named and all(c.id.startswith("con_") and c.name and c.strategy for c in named)


def test_organizations_are_named_and_renamed_as_a_person_would():
    names = [
        obj["object"]["display_name"]
        for name, obj in generated(6000)[0]
        if name in ("organization.created", "organization.updated")
        and "display_name" in obj.get("object", {})
    ]
    assert len(names) > 20
    for display in names:  # "Globex Europe", never "Globex xtlw (565)"
        assert all(word[:1].isupper() and word.isalpha() for word in display.split()), display
    groups = [obj["object"]["name"] for name, obj in generated(6000)[0] if name == "group.updated"]
    assert len(groups) > 20
    for group in groups:  # "eng-platform", never "eng-2986~38"
        assert all((part.isalnum() and part.islower()) or part.isdigit() for part in group.split("-")), group
