"""Every version of an alert, its repeats and its resolve reach the destinations, each under its own key, through
Apprise to real receivers (a pytest-httpserver webhook, an aiosmtpd mail server): a webhook gets `"status":
"resolved"`, e-mail is not told of resolves unless asked, a pager keeps one key per alert (PagerDuty's dedup_key,
Opsgenie's alias) and resolves or closes with it. (Seen in use: only version 1 of an alert was ever enqueued, and
nothing was ever resolved, so a pager's incident stayed open until closed by hand.)"""

from __future__ import annotations

import email
import time

import orjson
from aiosmtpd.controller import Controller

from helpers.deliveries import alert_write, free_port, run_worker, store_alerts, target
from tenant_events.destinations.message import alert_message, shape
from tenant_events.destinations.urls import instantiate
from tenant_events.store import StoreWriter
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.store.outbox import Outbox
from tenant_events.values.alerts import StoredAlert
from tenant_events.values.triage import Triage


def _received(httpserver, path="/hook"):
    return [
        orjson.loads(req.get_data()) | {"_key": req.headers.get("Idempotency-Key")}
        for req, resp in httpserver.log
        if req.path == path and resp.status_code == 200
    ]


def _fire_again(db, alert_id, version):
    """A firing folded into the alert, committed the evaluator's way (its outbox row comes with it)."""
    writer = StoreWriter(db)
    try:
        w = alert_write()
        w.alert_id, w.occurrences, w.reopen = alert_id, version, True
        mark = writer.run_alert_job(lambda ledger: ledger.watermark()).result()
        writer.run_alert_job(lambda ledger: ledger.commit([w], mark, mark)).result()
    finally:
        writer.close()


class _Mail:
    def __init__(self) -> None:
        self.subjects: list[str] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.subjects.append(str(email.message_from_bytes(envelope.content)["Subject"]))  # type: ignore[attr-defined]
        return "250 OK"


def test_versions_repeats_and_the_resolve_reach_each_destination_that_wants_them(tmp_path, httpserver):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    mail = _Mail()
    smtp = Controller(mail, hostname="127.0.0.1", port=free_port())
    smtp.start()
    db = tmp_path / "acme.sqlite3"
    [alert_id] = store_alerts(db, [alert_write()])
    repeat_s = 0.6
    hook = target("ops", f"json://127.0.0.1:{httpserver.port}/hook", repeat_minutes=repeat_s / 60)
    mailbox = target("mail", f"mailto://127.0.0.1:{smtp.port}?from=a@example.com&to=o@example.com")
    warnings_only = target("chat", f"json://127.0.0.1:{httpserver.port}/chat", severities=["warning"])
    targets = {"ops": hook, "mail": mailbox, "chat": warnings_only}
    base = f"tenant-events:acme:{alert_id}"
    try:
        assert hook.profile.sends_resolved and not mailbox.profile.sends_resolved  # by their kinds
        run_worker(db, targets, lambda: len(_received(httpserver)) >= 2 and mail.subjects)
        first, again = _received(httpserver)[:2]
        assert (first["_key"], first["status"], first["alert_version"], first["alert_key"]) == (
            f"{base}:1",
            "firing",
            1,
            base,
        )
        # an unacknowledged critical alert is said again, with a key of its own
        assert again["_key"] == f"{base}:1:repeat-1" and "Still firing, not acknowledged" in again["message"]
        _fire_again(db, alert_id, 2)
        run_worker(
            db,
            targets,
            lambda: any(m["_key"] == f"{base}:2" for m in _received(httpserver)) and len(mail.subjects) == 2,
        )
        with AlertTriage(db) as triage:
            triage.set(alert_id, "acknowledged", "ana")
        seen = len(_received(httpserver))
        watched_until = time.monotonic() + 4 * repeat_s  # a worker running through several repeat intervals
        run_worker(db, targets, lambda: time.monotonic() > watched_until)
        assert len(_received(httpserver)) == seen  # acknowledged: no more repeats
        with AlertTriage(db) as triage:
            triage.set(alert_id, "resolved", "ana", "a planned clean-up")
        run_worker(db, targets, lambda: _received(httpserver)[-1]["status"] == "resolved")
    finally:
        smtp.stop()
    last = _received(httpserver)[-1]
    assert last["_key"] == f"{base}:resolved-1" and last["title"].startswith("[resolved] Mass deletion")
    assert _received(httpserver, "/chat") == []  # it never took this alert: no resolve either
    assert len(mail.subjects) == 2  # versions 1 and 2, no repeat-less resolve …
    assert all("resolved" not in s for s in mail.subjects)  # … e-mail is not told of resolves by default


def test_a_newer_version_routed_while_an_older_one_waits_takes_its_place(tmp_path, httpserver):
    """A receiver that was down gets the alert once, as it is now, not every version it missed."""
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    db = tmp_path / "acme.sqlite3"
    [alert_id] = store_alerts(db, [alert_write()])
    hook = target("ops", f"json://127.0.0.1:{httpserver.port}/hook")
    outbox = Outbox(db)
    try:  # version 1 routed, but held (the receiver is down, or quiet hours)
        [row] = outbox.unrouted()
        outbox.route([(row, ["ops"], {"ops": time.time() + 3600})], time.time())
    finally:
        outbox.close()
    _fire_again(db, alert_id, 2)
    _fire_again(db, alert_id, 3)
    run_worker(db, {"ops": hook}, lambda: len(_received(httpserver)) >= 1)
    time.sleep(0.3)
    assert [m["_key"] for m in _received(httpserver)] == [f"tenant-events:acme:{alert_id}:3"]


def test_a_pager_gets_the_alerts_own_key_and_resolves_or_closes_with_it():
    alert = StoredAlert(**{**_stored(), "id": 7})
    firing = alert_message(alert, "firing", 2, 0, "acme")
    resolved = alert_message(alert, "resolved", 2, 1, "acme")
    pager = instantiate("pagerduty://integration@apikey")
    shape(pager, firing)
    assert (pager.dedup, pager.action) == ("tenant-events:acme:7", "trigger")  # the incident updates
    pager = instantiate("pagerduty://integration@apikey")
    shape(pager, resolved)
    assert (pager.dedup, pager.action) == ("tenant-events:acme:7", "resolve")
    genie = instantiate("opsgenie://apikey/")
    shape(genie, firing)
    assert genie.alias == "tenant-events:acme:7"
    genie = instantiate("opsgenie://apikey/")
    shape(genie, resolved)
    assert genie.alias == "tenant-events:acme:7" and genie.action == "close"
    assert resolved.body.startswith("Resolved: Mass deletion × 1") or resolved.body.startswith(
        "Resolved: Mass deletion"
    )
    assert "\n" not in resolved.body  # one short line for chat
    # who resolved it and why, on that line; a teammate's note reaches chat with its control characters escaped
    why = Triage(7, "resolved", "bo", 1.0e9, None, "line one\nline \x1b[2Jtwo")
    said = alert_message(alert, "resolved", 2, 1, "acme", resolution=why).body
    assert (
        " · by bo — line one\\nline \\x1b[2Jtwo · tenant-events://alert/acme/7" in said and "\n" not in said
    )


def _stored():
    w = alert_write()
    return {
        "id": 1,
        "rule_id": w.rule_id,
        "rule_name": w.rule_name,
        "severity": w.severity,
        "tenant": w.tenant,
        "catch_up": False,
        "notify": True,
        "occurrences": 2,
        "event_count": w.event_count,
        "first_seq": 1,
        "last_seq": 2,
        "first_event_id": w.first_event_id,
        "last_event_id": w.last_event_id,
        "first_time": w.first_time,
        "last_time": w.last_time,
        "last_time_ms": w.last_time_ms,
        "type_counts": w.type_counts,
        "detail": w.detail,
        "raised_at": w.raised_at,
        "updated_at": w.updated_at,
        "read_at": None,
    }


def test_pagerduty_and_opsgenie_receive_each_version_and_the_resolve_under_the_alerts_key(
    tmp_path, httpserver, monkeypatch
):
    """On the wire: PagerDuty gets `trigger` for versions 1 and 2 and `resolve`, all with the alert's own
    `dedup_key` (one incident, updated, then resolved); Opsgenie gets each version under the alert's alias and
    the close by that alias (`identifierType=alias`: Apprise's own close needs request ids from an earlier
    attempt of the same process, which a resolve sent later, or by another relay, does not have). The services'
    addresses in Apprise's tables point at a local receiver for the test."""
    from apprise.plugins import opsgenie, pagerduty

    accepted = orjson.dumps({"result": "Request will be processed", "requestId": "r-1", "took": 0.0})
    httpserver.expect_request("/pd/enqueue", method="POST").respond_with_data(accepted, 202)
    httpserver.expect_request("/genie/alerts", method="POST").respond_with_data(
        accepted, 202, content_type="application/json"
    )
    httpserver.expect_request("/genie/alerts/tenant-events:acme:1/close", method="POST").respond_with_data(
        accepted, 202, content_type="application/json"
    )
    monkeypatch.setitem(pagerduty.PAGERDUTY_API_LOOKUP, "us", httpserver.url_for("/pd/enqueue"))
    monkeypatch.setitem(opsgenie.OPSGENIE_API_LOOKUP, "us", httpserver.url_for("/genie/alerts"))
    db = tmp_path / "acme.sqlite3"
    [alert_id] = store_alerts(db, [alert_write()])
    assert alert_id == 1
    pager = target("pager", "pagerduty://integration@apikey/")
    genie = target("genie", "opsgenie://apikey/")
    assert pager.profile.sends_resolved and genie.profile.sends_resolved  # pagers want resolves by default
    targets = {"pager": pager, "genie": genie}

    def requests_to(prefix: str) -> list[tuple[str, str, dict[str, object]]]:
        return [
            (req.path, req.query_string.decode(), orjson.loads(req.get_data()))
            for req, resp in httpserver.log
            if req.path.startswith(prefix)
        ]

    run_worker(db, targets, lambda: requests_to("/pd") and requests_to("/genie"))
    _fire_again(db, alert_id, 2)
    run_worker(db, targets, lambda: len(requests_to("/pd")) >= 2 and len(requests_to("/genie")) >= 2)
    with AlertTriage(db) as triage:
        triage.set(alert_id, "resolved", "ana", "a planned clean-up")
    run_worker(db, targets, lambda: len(requests_to("/pd")) >= 3 and len(requests_to("/genie")) >= 3)
    time.sleep(0.3)  # nothing more comes: one request per delivery

    key = "tenant-events:acme:1"
    pd = requests_to("/pd")
    assert [(body["event_action"], body["dedup_key"]) for _, _, body in pd] == [
        ("trigger", key),
        ("trigger", key),
        ("resolve", key),
    ], pd
    assert str(pd[0][2]["payload"]["summary"]).startswith("[critical] Mass deletion")  # type: ignore[index]
    og = requests_to("/genie")
    assert [(path, body.get("alias")) for path, _, body in og[:2]] == [("/genie/alerts", key)] * 2, og
    path, query, body = og[2]
    assert (path, query) == (f"/genie/alerts/{key}/close", "identifierType=alias"), og
    assert str(body["note"]).startswith("Resolved: Mass deletion")
    assert " · by ana — a planned clean-up · tenant-events://alert/acme/1" in str(body["note"])  # who and why
    assert len(og) == 3 and len(pd) == 3
