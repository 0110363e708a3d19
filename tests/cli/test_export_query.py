"""`tenant-events export --query`: the window's query syntax on the command line, as a user runs it."""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import orjson

from helpers.query_model import expected_ids, simulated_rows, stored_events, write
from tenant_events.paths import AppPaths


def export(data_dir, *args):
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", "export", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_export_only_what_the_query_matches(tmp_path):
    db = AppPaths.resolve(tmp_path).database_file("acme")
    db.parent.mkdir(parents=True)
    write(db, simulated_rows(600))
    events = stored_events(db)
    query = "type:organization.* -purpose:test OR user:ada"
    want = expected_ids(events, query)
    assert 0 < len(want) < len(events)

    jsonl = export(tmp_path, "--query", query, "--jsonl", "-")
    assert jsonl.returncode == 0, jsonl.stderr
    assert [orjson.loads(line)["event"]["id"] for line in jsonl.stdout.splitlines()] == want
    assert f"exported {len(want)} events" in jsonl.stderr

    as_csv = export(tmp_path, "--query", query, "--csv", "-")
    assert as_csv.returncode == 0, as_csv.stderr
    assert [r["event_id"] for r in csv.DictReader(io.StringIO(as_csv.stdout))] == want


def test_a_query_that_starts_with_a_minus_works_as_typed(tmp_path):
    db = AppPaths.resolve(tmp_path).database_file("acme")
    db.parent.mkdir(parents=True)
    write(db, simulated_rows(300))
    events = stored_events(db)
    for query in ("-type:user.updated", "-purpose:test type:user.*"):
        want = expected_ids(events, query)
        assert 0 < len(want) < len(events)
        for spelled in (["--query", query], [f"--query={query}"]):
            out = export(tmp_path, *spelled, "--jsonl", "-")
            assert out.returncode == 0, out.stderr
            assert [orjson.loads(line)["event"]["id"] for line in out.stdout.splitlines()] == want
    # the value still has to be there
    missing = export(tmp_path, "--jsonl", "-", "--query")
    assert missing.returncode == 2 and "argument --query: expected one argument" in missing.stderr


def test_a_bad_query_is_one_line_naming_it_and_the_fix(tmp_path):
    db = AppPaths.resolve(tmp_path).database_file("acme")
    db.parent.mkdir(parents=True)
    write(db, simulated_rows(10))
    for query, span, reason in [
        (
            "usr:alice",
            "1–3 ('usr')",
            "unknown field 'usr' — did you mean user? (fields: type, family, user, email, org, group, role, connection, ip, client, purpose, id, tenant, alert, source)",
        ),
        (
            "type:user.delted",
            "6–16 ('user.delted')",
            "no event type 'user.delted' — did you mean user.deleted?",
        ),
        ('"unclosed', "1–9 ('\"unclosed')", 'this phrase has no closing quote — add " at its end'),
    ]:
        bad = export(tmp_path, "--query", query, "--jsonl", "-")
        assert bad.returncode == 2
        assert bad.stderr.count("\n") == 1, bad.stderr
        assert bad.stderr == f"tenant-events: --query {query!r} at characters {span}: {reason}\n"
        assert "Traceback" not in bad.stderr
        assert bad.stdout == ""
