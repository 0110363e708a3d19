"""Hostile settings (proving ground, hostile input): every field's bad values get a message naming the field, typed
(make_profile, what the dialogs and `login` use) or hand-edited into the file (load_settings); and a broken
settings file never loses the stored events or the sign-ins."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from helpers.events_factory import row
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.settings import Settings, load_settings, make_profile, save_settings
from tenant_events.store import Batch, EventReader, StoreWriter

GOOD = {"name": "acme", "domain": "acme.example", "client_id": "abcdefghijklmnopqrstuvwxyzABCDEF"}

BAD_PROFILE = [
    ("name", ["Acme", "-acme", "a" * 65, "../etc", "a b"]),
    ("domain", ["", "http://acme.example", "ftp://acme.example", "acme example", "acme.example/../x"]),
    ("auth_url", ["http://acme.example", "javascript:alert(1)", "file:///etc/passwd"]),
    ("base_url", ["http://acme.example/api/v2", "ws://acme.example"]),
    ("client_id", ["", "has space", "a/b", "x" * 129, "quote'd"]),
    ("audience", ["with space", "tab\tbed", "nl\nx"]),
    ("scopes", [[], [""], ["a b"], ['q"uote'], ["openid"], ["read:events"]]),
    ("event_types", [["user.exploded"], [""], ["USER.CREATED"]]),
    ("redirect_ports", [[0], [80], [70000], ["x"]]),
]


@pytest.mark.parametrize(("field", "value"), [(f, v) for f, vs in BAD_PROFILE for v in vs])
def test_a_bad_profile_value_is_refused_naming_the_field(field, value):
    with pytest.raises(ConfigError) as info:
        make_profile(**{**GOOD, field: value})
    assert info.value.field.startswith(f"profile {field}"), (info.value.field, str(info.value))
    assert info.value.exit_code == 3


BAD_FILE = [
    *[(("tenants", 0, f), v) for f, vs in BAD_PROFILE for v in vs],
    (("notifications", "enabled"), "maybe"),
    (("notifications", "event_types"), ["user.exploded"]),
    (("notifications", "do_not_disturb"), "later"),
    (("notifications", "quiet_hours"), ["25:00", "07:00"]),
    (("notifications", "quiet_hours"), ["22:00"]),
    (("retention", "keep_live_days"), 0),
    (("retention", "keep_archive_days"), -3),
    (("retention", "max_events"), 10),
    (("start_at_login",), "yes please"),
    (("theme",), "pink"),
    (("tenants",), {"name": "acme"}),
    (("surprise",), 1),
]


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize(
    ("where", "value"), BAD_FILE, ids=lambda x: ".".join(map(str, x)) if isinstance(x, tuple) else None
)
def test_a_bad_value_in_the_file_is_reported_naming_the_field_and_kept_aside(tmp_path, where, value):
    paths = AppPaths.resolve(tmp_path)
    data = json.loads(Settings(tenants=[make_profile(**GOOD)]).model_dump_json())
    target = data
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    paths.settings_file.write_text(json.dumps(data))
    notices: list[str] = []
    assert load_settings(paths, notices) == Settings()
    (notice,) = notices
    field = next(str(k) for k in reversed(where) if isinstance(k, str))
    assert field in notice and "moved to" in notice, notice
    (aside,) = paths.settings_file.parent.glob("settings.json.broken-*")
    assert json.loads(aside.read_text()) == data, "the user's file is kept as it was"


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize("damage", ["truncate", "garbage", "bad-field"])
def test_a_broken_settings_file_loses_no_stored_events_and_no_sign_in(tmp_path, damage):
    paths = AppPaths.resolve(tmp_path).ensure()
    profile = make_profile(**GOOD)
    save_settings(paths, Settings(tenants=[profile], active_tenant="acme"))
    secrets = MemorySecretStore()
    secrets.set("acme", "refresh-token-kept")
    db = paths.database_file("acme")
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(50)], cursor="off-00000049"))
    finally:
        writer.close()
    before = hashlib.sha256(db.read_bytes()).hexdigest()

    text = paths.settings_file.read_text()
    broken = {
        "truncate": text[: len(text) // 2],
        "garbage": "\x00\xff not json",
        "bad-field": text.replace('"theme": "system"', '"theme": "pink"'),
    }[damage]
    paths.settings_file.write_text(broken)
    notices: list[str] = []
    assert load_settings(paths, notices).tenants == []
    assert notices and "moved to" in notices[0]

    assert hashlib.sha256(db.read_bytes()).hexdigest() == before, "the events database was touched"
    assert secrets.get("acme") == "refresh-token-kept"
    export = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenant_events",
            "export",
            "--data-dir",
            str(tmp_path),
            "--tenant",
            "acme",
            "--jsonl",
            "-",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert export.returncode == 0, export.stderr
    assert len(export.stdout.splitlines()) == 50
    # Re-adding the profile under the same name finds everything again: events, cursor, sign-in.
    save_settings(paths, Settings(tenants=[make_profile(**GOOD)]))
    with EventReader(paths.database_file(load_settings(paths).tenant("acme").name)) as reader:
        assert reader.count() == 50 and reader.cursor().offset == "off-00000049"
