"""Tenant profiles and the settings file: validation naming the field, atomic 0600 writes, broken files moved
aside and reported, migrations that back up first, newer files refused."""

from __future__ import annotations

import json
import stat

import pytest

from tenant_events.alerts.from_settings import rule_set
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.settings import (
    SCHEMA_VERSION,
    Settings,
    callback_urls,
    load_settings,
    make_profile,
    save_settings,
)


@pytest.fixture
def paths(tmp_path):
    return AppPaths.resolve(tmp_path).ensure()


def test_profile_defaults_follow_the_real_service():
    p = make_profile(domain="acme.eu.auth0.com", client_id="AbCdEf0123456789AbCdEf0123456789")
    assert p.name == "acme-eu-auth0-com"
    assert p.auth_url == "https://acme.eu.auth0.com"
    assert p.issuer == "https://acme.eu.auth0.com/"
    assert p.audience == "https://acme.eu.auth0.com/api/v2/"
    assert p.base_url == "https://acme.eu.auth0.com/api/v2"
    assert p.scope == "openid profile email offline_access read:events"


def test_simulator_profile_from_a_loopback_auth_url():
    p = make_profile(auth_url="http://127.0.0.1:8123/", client_id="tenant-events-demo")
    assert p.domain == "127.0.0.1:8123"
    assert p.auth_url == "http://127.0.0.1:8123"
    assert p.audience == "http://127.0.0.1:8123/api/v2/"
    assert p.name == "127-0-0-1-8123"


@pytest.mark.parametrize(
    ("fields", "field", "text"),
    [
        ({"client_id": "abc"}, "domain", "is required"),
        ({"domain": "", "client_id": "abc"}, "domain", "is required"),
        ({"domain": "http://evil.example", "client_id": "abc"}, "domain", "must use https://"),
        (
            {"auth_url": "http://evil.example", "client_id": "abc"},
            "auth_url",
            "uses http:// to a non-loopback host",
        ),
        (
            {"domain": "ok.example", "auth_url": "http://evil.example", "client_id": "abc"},
            "auth_url",
            "non-loopback",
        ),
        ({"domain": "ok.example", "client_id": "has space"}, "client_id", "'has space' is not a client ID"),
        ({"domain": "ok.example", "client_id": "a/b"}, "client_id", "is not a client ID"),
        ({"domain": "ok.example", "client_id": ""}, "client_id", "is not a client ID"),
        ({"domain": "bad domain!", "client_id": "abc"}, "domain", "is not a domain name"),
        ({"domain": "ok.example", "client_id": "abc", "name": "Bad Name"}, "name", "lowercase"),
        (
            {"domain": "ok.example", "client_id": "abc", "redirect_ports": [80]},
            "redirect_ports",
            "not a usable port",
        ),
    ],
)
def test_bad_profile_values_are_refused_naming_the_field(fields, field, text):
    with pytest.raises(ConfigError) as info:
        make_profile(**fields)
    assert info.value.field.startswith(f"profile {field}"), info.value.field
    assert text in str(info.value)
    assert info.value.exit_code == 3


def test_callback_urls_list_what_to_register():
    fixed = make_profile(domain="acme.auth0.com", client_id="abc", redirect_ports=[53682, 53683])
    assert callback_urls(fixed) == ["http://127.0.0.1:53682/callback", "http://127.0.0.1:53683/callback"]
    anyport = make_profile(domain="acme.auth0.com", client_id="abc")
    assert callback_urls(anyport)[0].startswith("http://127.0.0.1/callback")


def test_save_is_atomic_0600_and_round_trips(paths):
    s = Settings()
    s.upsert(make_profile(domain="acme.auth0.com", client_id="abc"))
    s.notifications.do_not_disturb = True
    save_settings(paths, s)
    mode = stat.S_IMODE(paths.settings_file.stat().st_mode)
    assert mode == 0o600
    assert not list(paths.config_dir.glob(".settings-*"))
    loaded = load_settings(paths)
    assert loaded == s
    assert loaded.tenant(None).name == "acme-auth0-com"
    assert loaded.tenant("acme-auth0-com").client_id == "abc"


def test_tenant_lookup_errors_name_the_choice(paths):
    s = Settings()
    with pytest.raises(ConfigError, match="no tenant profile yet"):
        s.tenant(None)
    s.upsert(make_profile(domain="a.example", client_id="abc"))
    s.upsert(make_profile(domain="b.example", client_id="abc"))
    with pytest.raises(ConfigError, match=r"several profiles exist \(a-example, b-example\)"):
        s.tenant(None)
    known = r"known: a-example \(https://a.example/api/v2\), b-example \(https://b.example/api/v2\)"
    with pytest.raises(ConfigError, match=rf"no profile named 'c'; {known} — pick one with --tenant NAME"):
        s.tenant("c")
    with pytest.raises(ConfigError, match=r"no profile named 'c': there are no tenant profiles yet"):
        Settings().tenant("c")


def test_profiles_are_found_by_their_stream_url_however_it_is_spelled():
    s = Settings()
    s.upsert(make_profile(domain="a.example", client_id="abc"))
    s.upsert(make_profile(domain="127.0.0.1:5000", client_id="abc", name="sim"))
    assert [t.name for t in s.streaming_from("HTTPS://A.Example:443/api/v2/")] == ["a-example"]
    assert [t.name for t in s.streaming_from("http://127.0.0.1:5000/api/v2")] == ["sim"]
    assert s.streaming_from("https://a.example/api/v3") == []
    assert s.streaming_from("https://a.example:8443/api/v2") == []


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize(
    "content", ["{not json", "[]", '{"tenants": [{"name": "x"}]}', '{"schema_version": "v1"}']
)
def test_broken_file_is_moved_aside_and_reported(paths, content):
    paths.settings_file.write_text(content)
    notices: list[str] = []
    settings = load_settings(paths, notices)
    assert settings == Settings()
    aside = list(paths.config_dir.glob("settings.json.broken-*"))
    assert len(aside) == 1 and aside[0].read_text() == content
    assert not paths.settings_file.exists()
    assert len(notices) == 1 and str(aside[0]) in notices[0] and "could not be used" in notices[0]


def test_unversioned_file_is_backed_up_then_migrated(paths):
    old = {"tenants": [{"name": "t", "domain": "t.example", "client_id": "abc"}]}
    paths.settings_file.write_text(json.dumps(old))
    settings = load_settings(paths)
    assert settings.schema_version == SCHEMA_VERSION
    assert settings.tenants[0].auth_url == "https://t.example"
    backup = paths.config_dir / "settings.json.v0.bak"
    assert json.loads(backup.read_text()) == old
    assert json.loads(paths.settings_file.read_text())["schema_version"] == SCHEMA_VERSION


def test_a_schema_2_file_learns_what_each_destination_does_with_resolves_and_repeats(paths):
    """Alerts got a life (repeats, resolves): each saved destination says what it now does, by its kind — a
    pager or a webhook is told of resolves, e-mail and chat are not, as Alertmanager's receivers — and rules
    saved before take the new fields' defaults."""
    old = {
        "schema_version": 2,
        "destinations": [
            {"name": "hook", "url_masked": "json://hooks.example/***"},
            {"name": "pager", "url_masked": "pagerduty://***@***"},
            {"name": "mail", "url_masked": "mailtos://ops:***@mail.example"},
            {"name": "chat", "url_masked": "slack://T1/B***/X***", "send_resolved": True},  # chosen already
        ],
        "alerts": {"rules": [{"id": "mass-deletion", "coalesce_minutes": 20}]},
    }
    paths.settings_file.write_text(json.dumps(old))
    settings = load_settings(paths)
    assert [(d.name, d.send_resolved, d.repeat_minutes) for d in settings.destinations] == [
        ("hook", True, 60.0),
        ("pager", True, 60.0),
        ("mail", False, 60.0),
        ("chat", True, 60.0),
    ]
    assert json.loads((paths.config_dir / "settings.json.v2.bak").read_text()) == old
    saved = json.loads(paths.settings_file.read_text())
    assert (
        saved["schema_version"] == SCHEMA_VERSION == 3 and saved["destinations"][2]["send_resolved"] is False
    )
    assert settings.notifications.repeat_minutes == 60.0
    mass = rule_set(settings.alerts).get("mass-deletion")
    assert mass is not None and mass.resolve_after_s == 30 * 60 and mass.renotify


def test_newer_schema_is_refused_and_left_alone(paths):
    paths.settings_file.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ConfigError, match="written by a newer Tenant Events"):
        load_settings(paths)
    assert json.loads(paths.settings_file.read_text()) == {"schema_version": SCHEMA_VERSION + 1}


def test_duplicate_profile_names_are_refused():
    p = make_profile(domain="a.example", client_id="abc")
    with pytest.raises(ValueError, match="duplicate profile name"):
        Settings(tenants=[p, p])


def test_a_file_from_before_the_archive_keeps_its_age_limit_as_the_archives():
    from tenant_events.settings.preferences import RetentionSettings

    older = RetentionSettings.model_validate({"max_age_days": 90, "max_events": 2_000_000})
    assert (older.keep_live_days, older.keep_archive_days, older.max_events) == (30, 90, 2_000_000)
    tiers = older.tiers()
    assert (tiers.keep_live_days, tiers.keep_archive_days, tiers.max_live_rows) == (30, 90, 2_000_000)
    assert RetentionSettings().keep_archive_days == 400
