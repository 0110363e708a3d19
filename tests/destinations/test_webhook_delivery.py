"""Alerts delivered through Apprise to a real local HTTP receiver (pytest-httpserver) as a JSON webhook: the
message reads like the window, carries a stable dedup key, and survives 500s, a receiver that is down, a slow one,
429 with Retry-After; a 401 stops the destination with its reason; what is never delivered is marked."""

from __future__ import annotations

import threading
import time

import orjson
import pytest
from werkzeug import Request, Response

from helpers.deliveries import alert_write, free_port, run_worker, store_alerts, target
from helpers.slack import bound
from tenant_events.store.outbox import read_status, undelivered_alerts
from tenant_events.store.schema import connect


def _received(httpserver, path="/hook"):
    return [
        orjson.loads(req.get_data()) | {"_key": req.headers.get("Idempotency-Key")}
        for req, resp in httpserver.log
        if req.path == path and resp.status_code == 200
    ]


def test_an_alert_reaches_a_json_webhook_once_with_its_key_and_link(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    db = tmp_path / "acme.sqlite3"
    [alert_id] = store_alerts(db, [alert_write()])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    run_worker(db, {"ops": target("ops", url)}, lambda: len(_received(httpserver)) == 1)
    [msg] = _received(httpserver)
    key = f"tenant-events:acme:{alert_id}:1"
    assert msg["_key"] == key and msg["dedup_key"] == key
    assert msg["title"] == "[critical] Mass deletion — acme"
    assert "25 users deleted in 40 s" in msg["message"]
    assert "2026-11-01T10:00:00.000Z – 2026-11-01T10:00:40.000Z" in msg["message"]
    assert f"tenant-events://alert/acme/{alert_id}" in msg["message"] and msg["link"].endswith(f"/{alert_id}")
    assert msg["severity"] == "critical"
    # a second worker (a restart) sends nothing again
    time.sleep(0.2)
    run_worker(db, {"ops": target("ops", url)}, lambda: True)
    time.sleep(0.2)
    assert len(_received(httpserver)) == 1


def test_routing_by_severity_rule_and_tenant(tmp_path, httpserver):
    httpserver.expect_request("/pager", method="POST").respond_with_data("ok")
    httpserver.expect_request("/chat", method="POST").respond_with_data("ok")
    db = tmp_path / "acme.sqlite3"
    store_alerts(
        db,
        [
            alert_write("mass-deletion", "critical"),
            alert_write("off-hours", "warning"),
            alert_write("new-admin", "info"),
        ],
    )
    base = f"json://127.0.0.1:{httpserver.port}"
    targets = {
        "pager": target("pager", f"{base}/pager", severities=["critical"]),
        "chat": target(
            "chat",
            f"{base}/chat",
            severities=["info", "warning", "critical"],
            rules=["off-hours", "new-admin"],
        ),
        "other-tenant": target("other-tenant", f"{base}/other", tenants=["globex"]),
    }
    run_worker(
        db, targets, lambda: len(_received(httpserver, "/pager")) + len(_received(httpserver, "/chat")) == 3
    )
    assert [m["title"] for m in _received(httpserver, "/pager")] == ["[critical] Mass deletion — acme"]
    assert sorted(m["severity"] for m in _received(httpserver, "/chat")) == ["info", "warning"]
    assert not [r for r, _ in httpserver.log if r.path == "/other"]


def test_500_three_times_then_200_is_delivered_once_with_the_same_key(tmp_path, httpserver):
    answers = iter([500, 500, 500])
    keys = []

    def handler(request: Request) -> Response:
        keys.append(request.headers["Idempotency-Key"])
        return Response("boom" if (code := next(answers, 200)) != 200 else "ok", status=code)

    httpserver.expect_request("/hook", method="POST").respond_with_handler(handler)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    worker = run_worker(
        db,
        {"ops": target("ops", f"json://127.0.0.1:{httpserver.port}/hook")},
        lambda: len(_received(httpserver)) == 1,
    )
    assert len(keys) == 4 and len(set(keys)) == 1 and worker.delivered == 1


def test_a_receiver_that_is_down_for_a_while_gets_every_alert_when_it_is_back(tmp_path):
    from pytest_httpserver import HTTPServer

    port = free_port()
    db = tmp_path / "acme.sqlite3"
    ids = store_alerts(db, [alert_write(), alert_write("other-rule")])
    server = HTTPServer(host="127.0.0.1", port=port)
    server.expect_request("/hook", method="POST").respond_with_data("ok")
    down_for = 2.0  # connection refused until then
    starter = threading.Timer(down_for, server.start)
    started = time.monotonic()
    starter.start()
    try:
        run_worker(
            db,
            {"ops": target("ops", f"json://127.0.0.1:{port}/hook")},
            lambda: len(_received(server)) == 2,
            timeout=40,
        )
        assert time.monotonic() - started >= down_for
        status = read_status(db)
        assert status[0].last_error is None and status[0].pending == 0
        assert sorted(m["dedup_key"] for m in _received(server)) == [f"tenant-events:acme:{i}:1" for i in ids]
    finally:
        starter.cancel()
        if server.is_running():
            server.stop()


def test_a_slow_receiver_is_waited_for_and_holds_up_no_other_destination(tmp_path, httpserver):
    from pytest_httpserver import HTTPServer

    fast_at: list[float] = []
    fast_came = threading.Event()
    fast_while_slow_waited: list[bool] = []

    def slow(request: Request) -> Response:
        # the slow receiver answers only once the fast one was delivered (or after a bound that holds under load)
        fast_while_slow_waited.append(fast_came.wait(bound(10)))
        time.sleep(5.0)
        return Response("ok")

    def fast(request: Request) -> Response:
        fast_at.append(time.monotonic())
        fast_came.set()
        return Response("ok")

    slow_server = HTTPServer(host="127.0.0.1", port=0)  # a receiver of its own: one request at a time
    slow_server.expect_request("/slow", method="POST").respond_with_handler(slow)
    slow_server.start()
    httpserver.expect_request("/fast", method="POST").respond_with_handler(fast)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    try:
        started = time.monotonic()
        run_worker(
            db,
            {
                "slow": target("slow", f"json://127.0.0.1:{slow_server.port}/slow"),
                "fast": target("fast", f"json://127.0.0.1:{httpserver.port}/fast"),
            },
            lambda: len(_received(slow_server, "/slow")) == 1 and len(fast_at) == 1,
        )
        assert fast_while_slow_waited == [True]  # not behind the slow one
        assert time.monotonic() - started >= 5.0
        assert len(slow_server.log) == 1  # waited for, not timed out and sent again
    finally:
        slow_server.stop()


def test_429_waits_for_retry_after(tmp_path, httpserver):
    times: list[float] = []

    def handler(request: Request) -> Response:
        times.append(time.monotonic())
        if len(times) == 1:
            return Response("slow down", status=429, headers={"Retry-After": "1"})
        return Response("ok")

    httpserver.expect_request("/hook", method="POST").respond_with_handler(handler)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write()])
    run_worker(
        db,
        {"ops": target("ops", f"json://127.0.0.1:{httpserver.port}/hook")},
        lambda: len(_received(httpserver)) == 1,
    )
    assert len(times) == 2 and times[1] - times[0] >= 0.95  # not the 50 ms backoff


@pytest.mark.expect_warning_logs
def test_401_stops_the_destination_with_its_reason_until_its_url_changes(tmp_path, httpserver):
    httpserver.expect_request("/bad-token", method="POST").respond_with_data("no", status=401)
    httpserver.expect_request("/good-token", method="POST").respond_with_data("ok")
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write(), alert_write("second")])
    base = f"json://127.0.0.1:{httpserver.port}"
    bad = {"ops": target("ops", f"{base}/bad-token")}
    run_worker(db, bad, lambda: bool(read_status(db) and read_status(db)[0].stopped_reason))
    time.sleep(0.5)
    [status] = read_status(db)
    assert status.stopped_reason == "HTTP 401 Unauthorized: the receiver refused the URL or its token"
    assert status.pending == 2  # nothing lost
    assert [r.path for r, _ in httpserver.log].count("/bad-token") == 1  # stopped: not hammered
    # the same URL stays stopped after a restart; a new URL lifts the stop and both alerts go out
    run_worker(db, bad, lambda: True)
    time.sleep(0.3)
    assert [r.path for r, _ in httpserver.log].count("/bad-token") == 1
    run_worker(
        db,
        {"ops": target("ops", f"{base}/good-token")},
        lambda: len(_received(httpserver, "/good-token")) == 2,
    )
    assert read_status(db)[0].pending == 0


def test_undelivered_past_the_horizon_marks_the_alert(tmp_path):
    db = tmp_path / "acme.sqlite3"
    [alert_id] = store_alerts(db, [alert_write()])
    dead = f"json://127.0.0.1:{free_port()}/hook"
    run_worker(
        db,
        {"ops": target("ops", dead)},
        lambda: read_status(db) != [] and read_status(db)[0].undelivered == 1,
        horizon_s=0.5,
    )
    conn = connect(db, readonly=True)
    try:
        assert undelivered_alerts(conn) == {alert_id: ["ops"]}
    finally:
        conn.close()


def test_do_not_disturb_holds_back_a_chat_but_not_a_pager_that_ignores_it(tmp_path, httpserver):
    from tenant_events.alerts.delivery import QuietTimes
    from tenant_events.settings import NotificationSettings

    arrived: dict[str, float] = {}

    def handler(request: Request) -> Response:
        arrived[request.path] = time.time()
        return Response("ok")

    httpserver.expect_request("/pager", method="POST").respond_with_handler(handler)
    httpserver.expect_request("/chat", method="POST").respond_with_handler(handler)
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [alert_write(severity="critical")])
    until = time.time() + 1.5
    quiet = QuietTimes(NotificationSettings(do_not_disturb_until=until, critical_passes_dnd=False))
    base = f"json://127.0.0.1:{httpserver.port}"
    targets = {
        "pager": target("pager", f"{base}/pager", severities=["critical"], held_by_quiet=False),
        "chat": target("chat", f"{base}/chat", severities=["critical"]),
    }
    run_worker(db, targets, lambda: len(arrived) == 2, quiet=lambda: quiet)
    assert arrived["/pager"] < until <= arrived["/chat"]


def test_the_title_names_the_tenant_as_the_app_does(tmp_path, httpserver):
    """The profile's name ("demo"), not the service's tenant id ("demo-tenant"), which the body still gives."""
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    db = tmp_path / "demo.sqlite3"
    [alert_id] = store_alerts(db, [alert_write(tenant="demo-tenant")])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    run_worker(db, {"ops": target("ops", url)}, lambda: len(_received(httpserver)) == 1)
    [msg] = _received(httpserver)
    assert msg["title"] == "[critical] Mass deletion — demo"
    assert (
        "tenant demo (demo-tenant)" in msg["message"]
        and f"tenant-events://alert/demo/{alert_id}" in msg["message"]
    )


def test_nothing_is_delivered_for_a_silenced_alert_and_the_next_one_after_the_silence_is(
    tmp_path, httpserver
):
    """A silence in the installation's silences file (what `silences add` writes) holds the alert's deliveries:
    routed to no destination, a queued one given up as silenced; once lifted, alerts are delivered again."""
    from tenant_events.paths import AppPaths
    from tenant_events.settings.silences_file import SilenceBook, new_silence
    from tenant_events.tenant.deliveries import silence_check

    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    paths = AppPaths.resolve(tmp_path)
    book = SilenceBook.of(paths)
    silence = book.add(new_silence(duration_s=3600, author="alice", rule="mass-deletion", tenant="acme"))
    db = tmp_path / "acme.sqlite3"
    [silenced, other] = store_alerts(db, [alert_write(), alert_write("off-hours", "warning")])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    check = silence_check(paths, "acme")
    run_worker(db, {"ops": target("ops", url)}, lambda: len(_received(httpserver)) == 1, silenced=check)
    time.sleep(0.3)
    worker = run_worker(db, {"ops": target("ops", url)}, lambda: True, silenced=check)
    assert [m["severity"] for m in _received(httpserver)] == ["warning"]
    assert worker.delivered == 0
    book.remove(silence.id)
    [later] = store_alerts(db, [alert_write()])
    run_worker(db, {"ops": target("ops", url)}, lambda: len(_received(httpserver)) == 2, silenced=check)
    assert _received(httpserver)[-1]["_key"] == f"tenant-events:acme:{later}:1"
    assert silenced != later and other != later


def test_a_flood_of_one_rule_is_one_delivery_per_destination(tmp_path, httpserver):
    """Eight firings of one rule stored together (a script touching eight organizations) reach a webhook as one
    message naming the count and linking each alert; another rule's alert is its own delivery."""
    from dataclasses import replace

    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    db = tmp_path / "acme.sqlite3"
    orgs = ["Acme", "Umbrella", "Globex", "Initech", "Hooli", "Stark", "Wayne", "Tyrell"]
    writes = [
        replace(
            alert_write("org-connection", "warning"),
            rule_name=f"Organization connection changed · organization {org}",
            group_key=f"org_{org}",
        )
        for org in orgs
    ]
    ids = store_alerts(db, [*writes, alert_write()])
    url = f"json://127.0.0.1:{httpserver.port}/hook"
    worker = run_worker(db, {"ops": target("ops", url)}, lambda: len(_received(httpserver)) == 2)
    time.sleep(0.3)
    run_worker(db, {"ops": target("ops", url)}, lambda: True)
    messages = sorted(_received(httpserver), key=lambda m: m["title"])
    assert [m["title"] for m in messages] == [
        "[critical] Mass deletion — acme",
        "[warning] Organization connection changed · 8 organizations — acme",
    ]
    folded = messages[1]
    assert folded["_key"] == f"tenant-events:acme:{ids[0]}:1:fold-8"
    assert all(f"tenant-events://alert/acme/{i}" in folded["message"] for i in ids[:8])
    assert worker.delivered == 2
    with connect(db) as conn:
        assert undelivered_alerts(conn) == {}
        states = conn.execute("SELECT DISTINCT state FROM alert_deliveries").fetchall()
    assert states == [("delivered",)]
