"""A tenant added from a team hub: URL rules, names on the hub, the profile in the settings file (schema 2) and
its secret in the keyring — what "Connect to a team hub" calls, without Qt."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from tenant_events.auth.secret_store import MemorySecretStore, open_secret_store
from tenant_events.errors import ConfigError, SignInRequired
from tenant_events.hub.credentials import add_hub_profile, hub_options, remove_hub_profile, secret_slot
from tenant_events.hub.subjects import HubNames, parse_position, position_text
from tenant_events.paths import AppPaths
from tenant_events.settings import SCHEMA_VERSION, Settings, load_settings, make_profile
from tenant_events.settings.hubs import check_hub_url, split_hub_urls

SEED = "SUAMLK2ZNL35WSMW37E7UD4VZ7ELPKW7DHC3BWBSD2GCZ7IUQQXZIORRBU"  # an NKey user seed (nkeys' own example)
CREDS = f"-----BEGIN NATS USER JWT-----\neyJ0...\n------END NATS USER JWT------\n-----BEGIN USER NKEY SEED-----\n{SEED}\n"


@pytest.fixture
def paths(tmp_path) -> AppPaths:
    return AppPaths.resolve(str(tmp_path)).ensure()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("nats://127.0.0.1:4222", "nats://127.0.0.1:4222"),
        ("localhost", "nats://localhost:4222"),
        ("tls://hub.example.com", "tls://hub.example.com:4222"),
        ("tls://[::1]:7422", "tls://[::1]:7422"),
    ],
)
def test_hub_urls_are_normalised(url, expected):
    assert check_hub_url(url) == expected


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("nats://hub.example.com:4222", "use tls://hub.example.com:4222"),
        ("http://127.0.0.1:4222", "not a hub URL"),
        ("nats://u:p@127.0.0.1:4222", "keyring"),
        ("tls://hub.example.com:99999", "bad port"),
        ("tls://hub.example.com:4222/x", "path"),
    ],
)
def test_bad_hub_urls_say_what_to_do(url, says):
    with pytest.raises(ValueError, match=says):
        check_hub_url(url)


def test_a_cluster_is_a_comma_separated_list():
    assert split_hub_urls("nats://127.0.0.1:1, nats://127.0.0.1:2") == [
        "nats://127.0.0.1:1",
        "nats://127.0.0.1:2",
    ]
    with pytest.raises(ValueError, match="no hub URL"):
        split_hub_urls(" , ")


def test_names_on_the_hub():
    names = HubNames("acme-eu")
    assert names.stream == "TENANT_EVENTS_ACME_EU"
    assert (names.cursor_bucket, names.lease_bucket) == (
        "TENANT_EVENTS_ACME_EU_CURSOR",
        "TENANT_EVENTS_ACME_EU_LEASE",
    )
    assert names.event_subject("user.created") == "tenant-events.acme-eu.user.created"
    assert names.filter_subjects(()) == ["tenant-events.acme-eu.>"]
    assert names.filter_subjects(("user.deleted", "group.created")) == [
        "tenant-events.acme-eu.group.created",
        "tenant-events.acme-eu.user.deleted",
        "tenant-events.acme-eu.rejected",
        "tenant-events.acme-eu.gap",
    ]
    assert names.kind_of("tenant-events.acme-eu.organization.member.added") == "organization.member.added"
    assert names.kind_of("tenant-events.other.user.created") == ""
    with pytest.raises(ValueError, match="hub tenant name"):
        HubNames("Acme.EU")


def test_a_viewer_position_is_a_stream_sequence_and_never_a_tenant_cursor():
    assert parse_position(None) == 0
    assert parse_position(position_text(42)) == 42
    with pytest.raises(ValueError, match="tenant's, not a hub position"):
        parse_position("MjAyNi0xMS0yNFQxMDowMDowMFo")


def test_adding_a_hub_tenant_keeps_the_secret_in_the_store_and_the_rest_in_settings(paths):
    store = MemorySecretStore()
    profile = add_hub_profile(
        paths,
        store,
        "s3cret",
        name="acme",
        hub_urls=["tls://hub.example.com"],
        hub_tenant="acme",
        auth="password",
        user="viewer",
        event_types=["user.deleted"],
    )
    assert store.get(secret_slot(profile, paths.data_dir)) == "s3cret"
    text = paths.settings_file.read_text()
    assert "s3cret" not in text
    saved = json.loads(text)
    assert saved["schema_version"] == SCHEMA_VERSION == 3
    assert saved["hubs"][0]["hub_urls"] == ["tls://hub.example.com:4222"]
    assert load_settings(paths).hub("acme") == profile
    options = hub_options(profile, store, paths.data_dir)
    assert options.urls == ("tls://hub.example.com:4222",)
    assert (options.auth.kind, options.auth.user, options.auth.secret) == ("password", "viewer", "s3cret")
    assert "s3cret" not in repr(options)
    remove_hub_profile(paths, store, "acme")
    assert load_settings(paths).hubs == [] and store.get(secret_slot(profile, paths.data_dir)) is None


@pytest.mark.parametrize(
    ("fields", "secret", "field", "says"),
    [
        ({"auth": "password"}, "pw", "hub user", "required"),
        ({"hub_urls": ["nats://hub.example.com"]}, "", "hub hub_urls", "tls://hub.example.com:4222"),
        ({"hub_tenant": "Acme"}, "", "hub hub_tenant", "lowercase"),
        ({"event_types": ["user.made"]}, "", "hub event_types", "not an event type"),
        (
            {"auth": "nkey"},
            "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
            "hub nkey",
            "starts with SU",
        ),
        ({"auth": "creds"}, "just text", "hub creds", "not a NATS creds file"),
        ({"auth": "token"}, "  ", "hub token", "empty"),
    ],
)
def test_bad_input_names_the_field(paths, fields, secret, field, says):
    base = {"name": "acme", "hub_urls": ["nats://127.0.0.1:4222"], "hub_tenant": "acme"}
    with pytest.raises(ConfigError) as caught:
        add_hub_profile(paths, MemorySecretStore(), secret, **{**base, **fields})
    assert caught.value.field == field and says in str(caught.value)
    assert not paths.settings_file.exists()  # nothing half-saved


def test_nkey_and_creds_secrets_are_accepted(paths):
    store = MemorySecretStore()
    add_hub_profile(
        paths, store, SEED + "\n", name="a", hub_urls=["nats://127.0.0.1:1"], hub_tenant="a", auth="nkey"
    )
    add_hub_profile(
        paths, store, CREDS, name="b", hub_urls=["nats://127.0.0.1:1"], hub_tenant="b", auth="creds"
    )
    assert store.get(secret_slot(load_settings(paths).hub("a"), paths.data_dir)) == SEED
    assert hub_options(load_settings(paths).hub("b"), store, paths.data_dir).auth.kind == "creds"


def test_a_hub_profile_cannot_take_a_tenants_name(paths):
    from tenant_events.settings import save_settings

    save_settings(
        paths, Settings(tenants=[make_profile(domain="acme.example", client_id="abc", name="acme")])
    )
    with pytest.raises(ConfigError, match="already a tenant's name"):
        add_hub_profile(
            paths, MemorySecretStore(), name="acme", hub_urls=["nats://127.0.0.1:1"], hub_tenant="x"
        )


def test_a_missing_secret_asks_to_add_the_hub_again(paths):
    store = MemorySecretStore()
    profile = add_hub_profile(
        paths, store, "tok", name="acme", hub_urls=["nats://127.0.0.1:1"], hub_tenant="acme", auth="token"
    )
    store.delete(secret_slot(profile, paths.data_dir))
    with pytest.raises(SignInRequired, match="add the hub again"):
        hub_options(profile, store, paths.data_dir)


def test_schema_1_settings_are_backed_up_and_migrated(paths):
    old = {"schema_version": 1, "tenants": [{"name": "t", "domain": "t.example", "client_id": "abc"}]}
    paths.settings_file.write_text(json.dumps(old))
    settings = load_settings(paths)
    assert (
        settings.schema_version == SCHEMA_VERSION and settings.hubs == [] and settings.tenants[0].name == "t"
    )
    assert json.loads((paths.config_dir / "settings.json.v1.bak").read_text()) == old
    assert json.loads(paths.settings_file.read_text())["schema_version"] == SCHEMA_VERSION


@pytest.mark.dbus
def test_the_hub_secret_is_in_the_real_keyring(paths):
    if os.environ.get("TENANT_EVENTS_REAL_KEYRING") != "1":
        pytest.skip("TENANT_EVENTS_REAL_KEYRING is not set: run via ./run test (gnome-keyring on D-Bus)")
    opened = open_secret_store()
    assert opened.notice is None and opened.store.persistent
    name = f"hub-{uuid.uuid4().hex[:8]}"
    try:
        profile = add_hub_profile(
            paths,
            opened.store,
            "pw-" + name,
            name=name,
            hub_urls=["nats://127.0.0.1:1"],
            hub_tenant="acme",
            auth="password",
            user="viewer",
        )
        again = open_secret_store().store  # a new store object: the value comes from the Secret Service
        assert hub_options(profile, again, paths.data_dir).auth.secret == "pw-" + name
    finally:
        remove_hub_profile(paths, opened.store, name)


def test_an_older_versions_shared_hub_slot_is_never_read_and_the_message_says_why(paths):
    """Older versions kept a hub secret in `hub:<name>`, one slot for every data dir (another data dir's hub
    of the same name could read it): it is never read; adding the hub again removes it."""
    store = MemorySecretStore()
    fields = {"name": "acme", "hub_urls": ["nats://127.0.0.1:1"], "hub_tenant": "acme", "auth": "token"}
    profile = add_hub_profile(paths, store, "mine", **fields)
    store.delete(secret_slot(profile, paths.data_dir))
    store.set("hub:acme", "another data dir's")
    with pytest.raises(SignInRequired, match="an older version kept it where every data dir could read it"):
        hub_options(profile, store, paths.data_dir)
    add_hub_profile(paths, store, "mine again", **fields)
    assert store.get("hub:acme") is None
    assert hub_options(profile, store, paths.data_dir).auth.secret == "mine again"
    elsewhere = AppPaths.resolve(str(paths.data_dir / "elsewhere"))
    with pytest.raises(SignInRequired):  # another data dir: another slot
        hub_options(profile, store, elsewhere.data_dir)
