"""`tenant-events destinations list|add|remove|test` as a user runs them, with the real keyring (gnome-keyring
under ./run test): the URL's secrets are in the keyring only, never in the settings file or the output."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from helpers.fixtures_engine import cli

REAL = os.environ.get("TENANT_EVENTS_REAL_KEYRING") == "1"
pytestmark = [
    pytest.mark.dbus,
    pytest.mark.skipif(not REAL, reason="needs ./run test (gnome-keyring on D-Bus)"),
]


def _run(tmp_path, *args, stdin=None):
    proc = cli(*args, "--data-dir", str(tmp_path), stdin=-1 if stdin is not None else None)
    out, err = proc.communicate(stdin, timeout=60)
    return proc.returncode, out, err


def test_add_list_test_remove_keep_the_url_secret(tmp_path, httpserver):
    httpserver.expect_request("/hook/tok", method="POST").respond_with_data("ok")
    httpserver.expect_request("/hook/revoked", method="POST").respond_with_data("no", status=401)
    name = f"ops-{uuid.uuid4().hex[:8]}"
    password, token = "pw-" + uuid.uuid4().hex, "tk-" + uuid.uuid4().hex
    url = f"json://alerts:{password}@127.0.0.1:{httpserver.port}/hook/tok?+X-Api-Key={token}"
    code, out, err = _run(tmp_path, "destinations", "add", name, "--severity", "critical", stdin=url + "\n")
    assert code == 0, err
    try:
        assert password not in out + err and token not in out + err
        settings = (tmp_path / "settings.json").read_text()
        assert password not in settings and token not in settings
        [saved] = json.loads(settings)["destinations"]
        assert saved["url_masked"] == f"json://alerts:***@127.0.0.1:{httpserver.port}/hook/***?+X-Api-Key=***"
        assert saved["severities"] == ["critical"]

        code, out, err = _run(tmp_path, "destinations", "test", name)
        assert code == 0, err
        assert out.strip() == f"destination {name}: test alert delivered"
        [(request, _)] = [(r, s) for r, s in httpserver.log if r.path == "/hook/tok"]
        assert request.headers["X-Api-Key"] == token  # the whole URL came back from the keyring
        assert request.authorization.password == password

        code, out, err = _run(tmp_path, "destinations", "list")
        assert code == 0 and name in out and "critical; waits out quiet hours" in out
        assert password not in out and token not in out

        # a revoked token: the test says why, in one line, exit 6
        code, out, err = _run(
            tmp_path, "destinations", "add", name, stdin=url.replace("/tok?", "/revoked?") + "\n"
        )
        assert code == 0, err
        code, out, err = _run(tmp_path, "destinations", "test", name)
        assert code == 6
        assert err.strip().splitlines()[-1] == (
            f"tenant-events: destination {name}: test alert not delivered: HTTP 401 Unauthorized: the receiver "
            "refused the URL or its token — fix the URL: tenant-events destinations add NAME"
        )
        # bad input: one clear line, nothing saved
        code, out, err = _run(tmp_path, "destinations", "add", "x", stdin="nope://what\n")
        assert (
            code == 3
            and "nope:// is not a service Apprise knows" in err
            and len(err.strip().splitlines()) == 1
        )
        code, out, err = _run(tmp_path, "destinations", "add", "bad name!", stdin=url + "\n")
        assert code == 3 and "is not a destination name" in err
        assert [d["name"] for d in json.loads((tmp_path / "settings.json").read_text())["destinations"]] == [
            name
        ]
    finally:
        code, out, err = _run(tmp_path, "destinations", "remove", name)
    assert code == 0, err
    assert json.loads((tmp_path / "settings.json").read_text())["destinations"] == []
    from tenant_events.destinations.registry import slot
    from tenant_events.paths import AppPaths
    from tenant_events.tenant.sign_in import open_secret_store

    assert open_secret_store().store.get(slot(AppPaths.resolve(tmp_path), name)) is None
    code, out, err = _run(tmp_path, "destinations", "remove", name)
    assert code == 3 and f"no destination named {name!r}" in err


@pytest.mark.expect_warning_logs  # the worker logs the stop
def test_list_shows_a_stopped_destination_and_why_until_its_url_is_fixed(tmp_path, httpserver):
    from helpers.deliveries import alert_write, run_worker, store_alerts
    from tenant_events.paths import AppPaths
    from tenant_events.store.outbox import read_status
    from tenant_events.tenant.deliveries import DestinationTargets
    from tenant_events.tenant.sign_in import open_secret_store

    httpserver.expect_request("/revoked", method="POST").respond_with_data("no", status=401)
    httpserver.expect_request("/fixed", method="POST").respond_with_data("ok")
    name = f"pager-{uuid.uuid4().hex[:8]}"
    bad = f"json://127.0.0.1:{httpserver.port}/revoked"
    assert _run(tmp_path, "destinations", "add", name, stdin=bad + "\n")[0] == 0
    try:
        db = tmp_path / "tenants" / "acme.sqlite3"
        db.parent.mkdir(parents=True, exist_ok=True)
        store_alerts(db, [alert_write()])
        saved = DestinationTargets(
            AppPaths.resolve(tmp_path), lambda: open_secret_store().store
        )  # as `stream`
        run_worker(db, saved, lambda: bool(read_status(db) and read_status(db)[0].stopped_reason))
        code, out, err = _run(tmp_path, "destinations", "list")
        assert code == 0, err
        line = out.splitlines()[1]
        assert line.startswith("  acme: STOPPED since ") and line.endswith(
            ": HTTP 401 Unauthorized: the receiver refused the URL or its token; 1 pending"
        )
        fixed = f"json://127.0.0.1:{httpserver.port}/fixed"
        assert _run(tmp_path, "destinations", "add", name, stdin=fixed + "\n")[0] == 0
        code, out, err = _run(tmp_path, "destinations", "list")
        assert "STOPPED" not in out  # a new URL lifts the stop
    finally:
        _run(tmp_path, "destinations", "remove", name)
