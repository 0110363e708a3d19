"""Dashboard links from the profile's domain, cell filter choices, time range labels, event text for copying."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from tenant_events.values.events import EventFilter
from tenant_events.view import event_text
from tenant_events.view.cell_filter import choices, minute_around
from tenant_events.view.dashboard import dashboard_url, tenant_path
from tenant_events.view.time_range import filter_span, from_iso, range_label, to_iso


def test_dashboard_url_only_where_the_domain_names_a_hosted_tenant():
    assert tenant_path("acme.eu.auth0.com") == "eu/acme"
    assert tenant_path("acme.auth0.com") == "us/acme"
    assert tenant_path("login.acme.com") is None and tenant_path("127.0.0.1:8443") is None
    user = {"object": {"user_id": "auth0|abc"}}
    url = dashboard_url("acme.eu.auth0.com", "user.updated", user)
    assert (
        url == "https://manage.auth0.com/dashboard/eu/acme/users/" + base64.b64encode(b"auth0|abc").decode()
    )
    org = {"object": {"organization": {"id": "org_1"}, "user": {"user_id": "auth0|abc"}}}
    assert dashboard_url("acme.auth0.com", "organization.member.added", org) == (
        "https://manage.auth0.com/dashboard/us/acme/organizations/org_1/members"
    )
    assert dashboard_url("127.0.0.1:9000", "user.updated", user) is None  # the simulator has no dashboard
    assert dashboard_url("acme.auth0.com", "user.updated", {"object": "odd"}) is None
    assert dashboard_url("acme.auth0.com", "group.created", {"object": {"id": "grp_1"}}) is None


def test_cell_choices_say_what_they_do_and_offer_only_what_the_filter_can_express():
    data = {"object": {"user_id": "auth0|abc"}}
    by_type = choices("TYPE", "user.deleted", "user.deleted", "2026-11-01T00:00:00.000Z", None, data)
    assert [(c.kind, c.exclude, c.term) for c in by_type[:2]] == [
        ("type", False, "type:user.deleted"),
        ("type", True, "-type:user.deleted"),
    ]
    assert (
        by_type[-1].label.startswith("Show every event about this user") and by_type[-1].value == "auth0|abc"
    )
    # named: as the row's sentence names the id, else as the event itself does; the filter keeps the id
    named = {"object": {"user_id": "auth0|abc", "email": "ada@example.com"}}
    about = choices("TIME", "t", "user.deleted", "t", None, named)[-1]
    assert about.label == "Show every event about user ada@example.com" and about.term == "user:auth0|abc"
    about = choices("TIME", "t", "user.deleted", "t", None, named, {"auth0|abc": "Ada L."})[-1]
    assert about.label == "Show every event about user Ada L."
    org = {"object": {"organization": {"id": "org_1", "name": "acme"}, "user": {"user_id": "auth0|abc"}}}
    about = choices("TIME", "t", "organization.member.added", "t", None, org, {"org_1": "Acme Cloud"})[-1]
    assert about.label == "Show every event about organization Acme Cloud" and about.term == "org:org_1"
    summary = choices("SUMMARY", "User a b deleted", "user.deleted", "t", None, None)
    assert [c.exclude for c in summary] == [False] and summary[0].term == 'text:"User a b deleted"'
    assert [c.kind for c in choices("PURPOSE", "test", "user.deleted", "t", "test", None)] == ["test"]
    assert choices("PURPOSE", "", "user.deleted", "t", None, None) == []
    since, until = minute_around("2026-11-01T00:00:30.000Z")
    assert until - since == timedelta(minutes=1) and since.tzinfo is not None


def test_range_labels_are_whole_and_spans_follow_the_filter():
    now = datetime.now(UTC)
    today = range_label(now - timedelta(minutes=5), now, now)
    assert len(today) == 17 and today.count(":") == 4
    other = range_label(datetime(2026, 1, 1, 10, tzinfo=UTC), datetime(2026, 1, 3, 10, tzinfo=UTC), now)
    assert "Jan 01" in other and "Jan 03" in other
    a, b = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 1, tzinfo=UTC)
    assert filter_span(EventFilter(since=a, until=b)) == (int(a.timestamp()), int(b.timestamp()))
    assert filter_span(EventFilter()) is None
    assert from_iso(to_iso(a)) == a and from_iso("nonsense") is None and from_iso(7) is None
    assert from_iso("2026-01-01T00:00:00") is None  # a naive time is not trusted


def test_event_text_matches_the_cli_export_line():
    raw = json.dumps({"offset": "off-1", "event": {"id": "evt_x", "data": {"object": {"id": "org_1"}}}})
    line = event_text.jsonl_line("organization.created", "off-1", raw)
    assert line.endswith("\n") and json.loads(line) == {
        "type": "organization.created",
        "offset": "off-1",
        "event": json.loads(raw)["event"],
    }
    assert event_text.data_of(raw) == {"object": {"id": "org_1"}}
    assert event_text.pretty(raw).startswith('{\n  "offset"')
    assert event_text.message_of("not json") == "not json" and event_text.data_of("not json") is None


def test_copied_jsonl_line_is_the_export_line():
    from tenant_events.cli.export_cmd import jsonl_line as export_line
    from tenant_events.values.events import StoredEvent

    raw = json.dumps({"offset": "off-2", "event": {"id": "evt_y", "name": "Zoë", "n": 3}})
    ev = StoredEvent(1, "evt_y", "off-2", "user.created", "user", "t", "s", "demo", None, "", 0.0)
    assert event_text.jsonl_line("user.created", "off-2", raw) == export_line(ev, raw)
