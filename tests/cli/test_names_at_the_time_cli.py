"""Names at the time of each event on the command line, as the event table shows them: an organization renamed
after some of its events (Initech, then Globex) is Initech in `timeline` and `access diff` for what happened before
the rename and Globex after it, and `timeline` finds it by its former name, saying which organization it found."""

from __future__ import annotations

import csv
import io

import pytest

from helpers.access_story import iso
from helpers.cli_here import run_here
from helpers.entity_events import T0, Tenant
from tenant_events.store import Batch, StoreWriter

ORG, GRACE, ADMIN = "org_initech0000001", "auth0|grace0000000001", "rol_admin0001"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Grace joins Initech and is made admin; Initech is renamed Globex; Grace leaves Globex."""
    data = tmp_path_factory.mktemp("names") / "data"
    (data / "tenants").mkdir(parents=True)
    t = Tenant()
    org = {"id": ORG, "name": "initech"}  # (what a member event carries of its organization)
    grace = {"user_id": GRACE}
    rows = [
        t.row("organization.created", t.org(ORG, "initech", "Initech"), at=0),
        t.row("user.created", t.user(GRACE, "grace@example.com", "Grace Hopper"), at=1),
        t.row("organization.member.added", {"organization": org, "user": grace}, at=2),
        t.row(
            "organization.member.role.assigned",
            {"organization": org, "user": grace, "role": t.role(ADMIN, "admin")},
            at=3,
        ),
        t.row("organization.updated", t.org(ORG, "globex", "Globex"), at=60),
        t.row(
            "organization.member.deleted",
            {"organization": {"id": ORG, "name": "globex"}, "user": grace},
            at=120,
        ),
    ]
    writer = StoreWriter(data / "tenants" / "acme.sqlite3")
    try:
        writer.commit_sync(Batch(events=rows, cursor="c1"))
        writer.index_all_sync()
    finally:
        writer.close()
    return data


def cli(data, *words):
    return run_here([*words[:1], "--data-dir", str(data), *words[1:]])


def test_the_timeline_says_each_event_with_the_names_at_its_time(data):
    result = cli(data, "timeline", f"org:{ORG}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    said = {line.split("  ")[2]: line.split("  ")[3] for line in lines if "  acme  " in line}
    assert said["organization.member.added"] == "grace@example.com added to organization Initech"
    assert said["organization.member.role.assigned"] == (
        "grace@example.com added to organization Initech as admin"
    )
    assert said["organization.member.deleted"] == "grace@example.com removed from organization Globex"
    assert result.stderr.strip() == f"tenant-events: 5 events name org:{ORG}"


def test_the_timeline_finds_an_organization_by_a_former_name_and_says_which(data):
    result = cli(data, "timeline", "org:initech")  # any case, as names are
    assert result.returncode == 0, result.stderr
    assert result.stdout == cli(data, "timeline", f"org:{ORG}").stdout
    assert result.stderr.strip() == "tenant-events: 5 events name org:Globex (formerly initech)"
    current = cli(data, "timeline", "org:Globex")
    assert current.returncode == 0 and current.stderr.strip() == "tenant-events: 5 events name org:Globex"


@pytest.mark.expect_warning_logs  # (run in this process) the command logs the error line it prints
def test_a_name_nothing_was_ever_called_is_still_not_found(data):
    result = cli(data, "timeline", "org:Umbrella")
    assert result.returncode == 2 and result.stderr.startswith(
        "tenant-events: no stored event names org:Umbrella"
    )


def test_the_access_diff_says_each_change_with_the_names_at_its_time(data):
    before = cli(data, "access", "diff", "--from", iso(T0), "--to", iso(T0.replace(minute=1)))
    assert before.returncode == 0, before.stderr
    assert "grace@example.com was given role admin in organization Initech" in before.stdout
    assert "    grace@example.com added to organization Initech as admin [" in before.stdout
    assert "Globex" not in before.stdout
    after = cli(
        data, "access", "diff", "--from", iso(T0.replace(minute=1)), "--to", iso(T0.replace(minute=5))
    )
    assert after.returncode == 0, after.stderr
    assert "grace@example.com lost role admin in organization Globex" in after.stdout
    assert "    grace@example.com removed from organization Globex [" in after.stdout
    assert "Initech" not in after.stdout
    rows = list(
        csv.DictReader(
            io.StringIO(
                cli(
                    data, "access", "diff", "--from", iso(T0), "--to", iso(T0.replace(minute=1)), "--csv", "-"
                ).stdout
            )
        )
    )
    assert len(rows) == 2 and {r["organization"] for r in rows} == {"Initech"}
