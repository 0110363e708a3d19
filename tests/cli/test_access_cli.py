"""`tenant-events access` and `access diff` on a tenant whose access at each moment is known by hand
(helpers/access_story.py): the grants at a moment and the changes between two, as CSV and as JSON lines, narrowed
by role, organization and user, each change with the event that did it and who did it; how complete each answer
is; a moment before the first stored event refused; and a history the indexer never reached taken in first."""

from __future__ import annotations

import csv
import io
import re

import orjson
import pytest

from helpers.access_story import (
    ADMIN,
    AFTER,
    AUDITOR,
    BEFORE,
    GRACE,
    HR,
    KEN,
    LINUS,
    SAML,
    STARK,
    VIEWER,
    at,
    iso,
    write_story,
)
from helpers.cli_here import run_here
from helpers.entity_events import Tenant
from tenant_events.store import Batch, EventReader, StoreWriter

# At BEFORE: (what, user, organization, group, role, connection) of every grant.
GRANTS_BEFORE = {
    ("organization member", GRACE, STARK, None, None, None),
    ("organization role", GRACE, STARK, None, ADMIN, None),
    ("organization connection", None, STARK, None, None, SAML),
    ("organization group role", None, STARK, HR, ADMIN, None),
    ("group member", KEN, None, HR, None, None),
    ("organization role through group", KEN, STARK, HR, ADMIN, None),
    (
        "organization role",
        LINUS,
        STARK,
        None,
        AUDITOR,
        None,
    ),  # given before the history: its removal is stored
}
# From BEFORE to AFTER: (change, what, user, organization, group, role, connection, event time).
CHANGES = {
    ("left", "organization member", GRACE, STARK, None, None, None, at(100)),
    ("removed", "organization role", GRACE, STARK, None, ADMIN, None, at(100)),
    ("granted", "group role", None, None, HR, VIEWER, None, at(101)),
    ("granted", "role through group", KEN, None, HR, VIEWER, None, at(101)),
    ("connection removed", "organization connection", None, STARK, None, None, SAML, at(102)),
    ("removed", "organization role", LINUS, STARK, None, AUDITOR, None, at(104)),
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A data dir holding the story, as a `stream` stopped before its idle-time indexer reached it."""
    data = tmp_path_factory.mktemp("access") / "data"
    (data / "tenants").mkdir(parents=True)
    write_story(data / "tenants" / "acme.sqlite3", indexed=False)
    return data


def access(data, *words):
    return run_here(["access", "--data-dir", str(data), *words])


def _ids(row, *names):
    return tuple(row[n] or None for n in names)


def test_the_grants_at_a_moment_as_csv(data):
    result = access(data, "--at", iso(BEFORE), "--csv", "-")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    got = {
        (r["what"], *_ids(r, "user_id", "organization_id", "group_id", "role_id", "connection_id"))
        for r in rows
    }
    assert got == GRANTS_BEFORE
    grace_admin = next(r for r in rows if r["what"] == "organization role" and r["user_id"] == GRACE)
    assert (grace_admin["user"], grace_admin["organization"], grace_admin["role"]) == (
        "grace@example.com",
        "Stark Industries",
        "admin",
    )  # the names the event table shows
    assert (grace_admin["tenant"], grace_admin["at"], grace_admin["since"]) == (
        "acme",
        iso(BEFORE),
        iso(at(4)),
    )
    with EventReader(data / "tenants" / "acme.sqlite3") as reader:
        assigned = reader.page_before(reader_filter("organization.member.role.assigned"), None, 1)[0]
    assert grace_admin["event_id"] == assigned.event_id
    assert "History complete from 2026-11-01 12:00:00 UTC" in result.stderr
    assert result.stderr.strip().endswith("tenant-events: 7 grants in acme")
    linus = next(r for r in rows if r["user_id"] == LINUS)
    assert (linus["since"], linus["event_id"]) == ("before the first stored event", "")


def reader_filter(event_type):
    from tenant_events.store import EventFilter

    return EventFilter(types=frozenset({event_type}))


def test_the_admins_at_a_moment_as_json_lines(data):
    result = access(data, "--at", iso(BEFORE), "--role", "admin", "--jsonl", "-")
    assert result.returncode == 0, result.stderr
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert {(r["what"], r["user_id"], r["group_id"]) for r in rows} == {
        ("organization role", GRACE, None),
        ("organization group role", None, HR),
        ("organization role through group", KEN, HR),  # Ken is admin through his group
    }
    assert all(r["role"] == "admin" and r["organization"] == "Stark Industries" for r in rows)


def test_one_grant_and_one_change_are_counted_in_the_singular(data):
    result = access(data, "--at", iso(BEFORE), "--user", LINUS)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().endswith("tenant-events: 1 grant in acme")
    result = access(data, "diff", "--from", iso(BEFORE), "--to", iso(AFTER), "--user", LINUS)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().endswith("tenant-events: 1 change in acme")


def test_the_changes_between_two_moments_as_csv_with_the_events_and_who_did_them(data):
    result = access(data, "diff", "--from", iso(BEFORE), "--to", iso(AFTER), "--csv", "-")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    got = {
        (
            r["change"],
            r["what"],
            *_ids(r, "user_id", "organization_id", "group_id", "role_id", "connection_id"),
            r["at"],
        )
        for r in rows
    }
    assert got == {(*c[:-1], iso(c[-1])) for c in CHANGES}
    left = next(r for r in rows if r["change"] == "left")
    assert (left["event_type"], left["event"]) == (
        "organization.member.deleted",
        "grace@example.com removed from organization Stark Industries",  # the event table's sentence
    )
    assert (left["client"], left["client_id"], left["ip"]) == (
        "Backoffice Script",
        "cli_backoffice",
        "203.0.113.7",
    )
    removed = next(r for r in rows if r["change"] == "removed")
    assert removed["event_id"] == left["event_id"]  # leaving Stark took her admin role with it
    viewer = next(r for r in rows if r["what"] == "role through group")
    assert viewer["event"] == "role viewer assigned to group hr" and viewer["client"] == ""
    # The answer names the possible gap inside the range, with its window and reason.
    assert "Possible gap: events from 2026-11-01 12:01:30 UTC to 2026-11-01 12:01:40 UTC may be missing" in (
        result.stderr
    )


def test_the_changes_as_json_lines_into_a_file_narrowed_to_an_organization(data, tmp_path):
    out = tmp_path / "changes.jsonl"
    result = access(
        data,
        "diff",
        "--from",
        iso(BEFORE),
        "--to",
        iso(AFTER),
        "--org",
        "stark industries",
        "--jsonl",
        str(out),
    )
    assert result.returncode == 0 and result.stdout == "", result.stderr
    rows = [orjson.loads(line) for line in out.read_text().splitlines()]
    assert {(r["change"], r["what"]) for r in rows} == {
        ("left", "organization member"),
        ("removed", "organization role"),
        ("connection removed", "organization connection"),
    }
    assert {r["from"] for r in rows} == {iso(BEFORE)} and {r["to"] for r in rows} == {iso(AFTER)}
    assert "tenant-events: 4 changes in acme" in result.stderr


@pytest.mark.parametrize(
    ("option", "value", "column", "wanted"), [("--group", "hr", 3, HR), ("--user", "ken@example.com", 1, KEN)]
)
def test_the_grants_at_a_moment_narrowed_to_a_group_or_a_user_by_name(data, option, value, column, wanted):
    result = access(data, "--at", iso(BEFORE), option, value, "--csv", "-")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    got = {
        (r["what"], *_ids(r, "user_id", "organization_id", "group_id", "role_id", "connection_id"))
        for r in rows
    }
    assert got == {g for g in GRANTS_BEFORE if g[column] == wanted} and len(got) >= 2


def test_options_given_before_the_action_count(data):
    result = run_here(
        [
            "access",
            "--data-dir",
            str(data),
            "--user",
            "ken@example.com",
            "diff",
            "--from",
            iso(BEFORE),
            "--to",
            iso(AFTER),
            "--jsonl",
            "-",
        ]
    )
    assert result.returncode == 0, result.stderr
    assert [orjson.loads(line)["what"] for line in result.stdout.splitlines()] == ["role through group"]


def test_at_now_is_the_moment_the_command_runs(data):
    def grants(*words):
        result = access(data, *words, "--csv", "-")
        assert result.returncode == 0, result.stderr
        return sorted(
            tuple(v for k, v in row.items() if k != "at")
            for row in csv.DictReader(io.StringIO(result.stdout))
        )

    assert grants("--at", "now") == grants() == grants("--at", "0m")
    assert grants("--at", "now") != grants("--at", iso(BEFORE))  # (the history changed after BEFORE)


def test_text_names_the_tenant_the_moment_how_complete_and_each_side(data):
    result = access(data, "--at", iso(BEFORE))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "Access in acme at 2026-11-01 12:00:50 UTC",
        "History complete from 2026-11-01 12:00:00 UTC (the first stored event); access given before then and not "
        "changed since is not known.",
        "7 grants: 4 roles (3 admin-like), 1 connection; 1 organization, 1 group, 3 users",
    ]
    text = result.stdout
    assert (
        "  organization Stark Industries (org_stark000000001)\n    member grace@example.com has role admin"
        in text
    )
    assert "    member ken@example.com has role admin through group hr" in text
    assert "  group hr (grp_hr00000000001)\n    role admin in organization Stark Industries" in text
    assert (
        "  user ken@example.com (auth0|ken00000000000002)\n    role admin in organization Stark Industries through group hr"
        in text
    )


@pytest.mark.expect_warning_logs  # (run in this process) the command logs the error line it prints
def test_a_moment_before_the_first_stored_event_cannot_be_known(data):
    """One sentence, its times written as every other time the command prints, and a hint that can be given back
    as it is written (no full stop before the dash, no second way of writing a time)."""
    result = access(data, "--at", "2026-10-31T23:00:00Z", "--csv", "-")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "tenant-events: Who held access at 2026-10-31 23:00:00 UTC cannot be known: the stored history starts at "
        "2026-11-01 12:00:00 UTC — ask about a moment from 2026-11-01 12:00:00 UTC on"
    )
    result = access(data, "diff", "--from", "60d", "--csv", "-")
    assert result.returncode == 2 and result.stdout == ""
    assert re.fullmatch(
        r"tenant-events: What changed after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC cannot be known: the stored history "
        r"starts at 2026-11-01 12:00:00 UTC — ask about a moment from 2026-11-01 12:00:00 UTC on",
        result.stderr.strip(),
    ), result.stderr
    answered = access(data, "--at", "2026-11-01 12:00:00 UTC", "--jsonl", "-")
    assert answered.returncode == 0, answered.stderr


@pytest.mark.expect_warning_logs
def test_the_first_moment_known_is_the_next_whole_second_when_the_history_starts_inside_one(tmp_path):
    """A moment earlier in the first event's second cannot be known; both times are said to the millisecond (to
    the second they would read the same), and the hint names the next whole second, which can be asked as it is
    written."""
    data = tmp_path / "data"
    (data / "tenants").mkdir(parents=True)
    t = Tenant()
    first = t.row(
        "organization.member.added", {"organization": {"id": "org_1"}, "user": {"user_id": "u1"}}, at=0.25
    )
    writer = StoreWriter(data / "tenants" / "acme.sqlite3")
    writer.commit_sync(Batch(events=[first], cursor="c"))
    writer.close()
    refused = access(data, "--at", "2026-11-01T12:00:00Z")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "tenant-events: Who held access at 2026-11-01 12:00:00.000 UTC cannot be known: the stored history starts "
        "at 2026-11-01 12:00:00.250 UTC — ask about a moment from 2026-11-01 12:00:01 UTC on"
    )
    answered = access(data, "--at", "2026-11-01 12:00:01 UTC", "--jsonl", "-")
    assert answered.returncode == 0 and orjson.loads(answered.stdout)["what"] == "organization member"


def test_a_recent_duration_is_a_moment_after_the_story(data):
    result = access(data, "diff", "--from", "1h", "--jsonl", "-")
    assert result.returncode == 0 and result.stdout == ""
    assert "tenant-events: 0 changes in acme" in result.stderr


@pytest.mark.expect_warning_logs
def test_to_before_from_is_one_line(data):
    result = access(data, "diff", "--from", iso(AFTER), "--to", iso(BEFORE))
    assert (result.returncode, result.stderr) == (
        2,
        "tenant-events: --to must be later than --from — swap them, or leave --to out for now\n",
    )


def test_now_is_the_end_of_the_story(data):
    result = access(data, "--jsonl", "-")
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert {(r["what"], r["role_id"]) for r in rows} == {
        ("organization group role", ADMIN),
        ("group member", None),
        ("group role", VIEWER),
        ("organization role through group", ADMIN),
        ("role through group", VIEWER),
    }
    assert {r["at"] for r in rows} == {"now"}
