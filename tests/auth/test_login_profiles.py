"""How `tenant-events login` creates, updates and picks tenant profiles (no network involved)."""

from __future__ import annotations

import argparse

import pytest

from tenant_events.cli.login_cmd import _profile_for_login
from tenant_events.errors import ConfigError
from tenant_events.settings import Settings, make_profile


def args(**kw):
    base = {
        "tenant": None,
        "auth_url": None,
        "client_id": None,
        "audience": None,
        "base_url": None,
        "name": None,
        "ports": None,
    }
    return argparse.Namespace(**(base | kw))


def test_auth_url_creates_a_profile():
    profile, changed = _profile_for_login(args(auth_url="https://acme.example", client_id="abc"), Settings())
    assert changed and profile.name == "acme-example" and profile.audience == "https://acme.example/api/v2/"


def test_auth_url_updates_urls_and_keeps_profile_only_fields():
    s = Settings()
    s.upsert(
        make_profile(
            domain="acme.example", client_id="old", event_types=["user.created"], redirect_ports=[53682]
        )
    )
    profile, changed = _profile_for_login(args(auth_url="https://acme.example", client_id="new"), s)
    assert changed and profile.client_id == "new"
    assert profile.event_types == ["user.created"] and profile.redirect_ports == [53682]
    same, changed = _profile_for_login(args(auth_url="https://acme.example", client_id="old"), s)
    assert not changed and same == s.tenants[0]


def test_tenant_picks_a_saved_profile_and_port_overrides_are_saved():
    s = Settings()
    s.upsert(make_profile(domain="a.example", client_id="abc"))
    s.upsert(make_profile(domain="b.example", client_id="abc"))
    profile, changed = _profile_for_login(args(tenant="b-example"), s)
    assert profile.name == "b-example" and not changed
    profile, changed = _profile_for_login(args(tenant="b-example", ports=[53682]), s)
    assert changed and profile.redirect_ports == [53682]
    with pytest.raises(ConfigError, match="several profiles exist"):
        _profile_for_login(args(), s)


def test_tenant_and_auth_url_together_are_refused():
    with pytest.raises(ConfigError, match="--tenant: use either"):
        _profile_for_login(args(tenant="x", auth_url="https://a.example", client_id="abc"), Settings())
    with pytest.raises(ConfigError, match="--auth-url: is required with --client-id"):
        _profile_for_login(args(client_id="abc"), Settings())
