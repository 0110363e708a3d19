"""Names at the time of each event on the command line, as the event table shows them: an organization renamed
after some of its events (Initech, then Globex) is Initech in `timeline` and `access diff` for what happened before
the rename and Globex after it, and in the summary column of `export --csv`; `timeline` finds it by its former
name, saying which organization it found."""

from __future__ import annotations

import csv
import io

import pytest

from helpers.access_story import iso
from helpers.cli_here import run_here
from helpers.entity_events import T0
from helpers.renamed_org import ADMIN, ORG, SAID, write_renamed_org


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    data = tmp_path_factory.mktemp("names") / "data"
    (data / "tenants").mkdir(parents=True)
    write_renamed_org(data / "tenants" / "acme.sqlite3")
    return data


def cli(data, *words):
    return run_here([*words[:1], "--data-dir", str(data), *words[1:]])


def test_the_timeline_says_each_event_with_the_names_at_its_time(data):
    result = cli(data, "timeline", f"org:{ORG}")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    said = [(line.split("  ")[2], line.split("  ")[3]) for line in lines if "  acme  " in line]
    assert said == [s for s in SAID if s[0] != "user.created"]  # (Grace's own event does not name Initech)
    assert result.stderr.strip() == f"tenant-events: 5 events name org:{ORG}"


def test_one_event_is_counted_in_the_singular(data):
    result = cli(data, "timeline", f"role:{ADMIN}")  # only Grace's assignment names the role
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == f"tenant-events: 1 event names role:{ADMIN}"
    result = cli(data, "export", "--query", "type:organization.updated", "--jsonl", "-")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "tenant-events: exported 1 event from acme"


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


def test_the_csv_export_summary_is_the_tables_sentence(data):
    result = cli(data, "export", "--csv", "-")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["type"], r["summary"]) for r in rows] == SAID
