"""Silences kept in the installation's silences file: made, listed and lifted by the CLI as a user runs it,
matched against alerts by rule, severity, tenant and group (key or name), and two commands adding at once both
keep theirs; an entry that does not read as a silence is skipped, never shown."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import orjson

from helpers.stored_alerts import stored_alert
from tenant_events.paths import AppPaths
from tenant_events.settings.silences_file import FILE_NAME, SilenceBook, entry_of, new_silence
from tenant_events.values.silences import silencing

ALERT = stored_alert(
    rule_id="mass-deletion-by-actor",
    rule_name="Mass deletion by one actor · client HR Import",
    tenant="acme-tenant",
    event_count=10,
    last_seq=10,
    type_counts={"user.deleted": 10},
    group_key="cli_HRIMPORT",
)


def cli(data_dir, *args):
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", "silences", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_add_list_and_remove_from_the_command_line(tmp_path):
    made = cli(tmp_path, "add", "--rule", "org-connection", "--for", "2h", "--comment", "onboarding Acme")
    assert made.returncode == 0, made.stderr
    silence_id = made.stdout.split()[0]
    listed = cli(tmp_path, "list")
    assert listed.returncode == 0 and silence_id in listed.stdout
    assert "rule org-connection — until" in listed.stdout and "onboarding Acme" in listed.stdout
    lifted = cli(tmp_path, "remove", silence_id)
    assert lifted.returncode == 0 and f"lifted {silence_id}" in lifted.stdout
    assert silence_id not in cli(tmp_path, "list").stdout
    assert silence_id in cli(tmp_path, "list", "--all").stdout  # ended: listed on demand for a week
    for args, exit_code, line in [
        (("add", "--rule", "no-such-rule", "--for", "1h"), 3, "--rule: no alert rule 'no-such-rule'"),
        (("add", "--rule", "org-connection", "--for", "5y"), 3, "--for: '5y' is not a duration"),
        (("add", "--rule", "org-connection"), 3, "needs --for or --until"),
        (("remove", "deadbeef"), 3, "no silence 'deadbeef'"),
        (("add", "--severity", "loud", "--for", "1h"), 2, "invalid choice: 'loud'"),
    ]:
        done = cli(tmp_path, *args)
        assert done.returncode == exit_code and line in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1


def test_matchers_rule_severity_tenant_and_group_by_key_or_name(tmp_path):
    now = 1_000.0
    book = SilenceBook(tmp_path / FILE_NAME, clock=lambda: now)

    def silence(**matchers):
        return new_silence(duration_s=60, author="alice", now=now, **matchers)

    assert silence(rule="mass-deletion-by-actor").matches(ALERT, "acme")
    assert silence(severity="critical", tenant="acme").matches(ALERT, "acme")
    assert silence(tenant="acme-tenant").matches(ALERT, "other-profile")  # the tenant id too
    assert silence(group="cli_HRIMPORT").matches(ALERT, "acme")
    assert silence(group="client HR Import").matches(ALERT, "acme")  # the name the alert shows
    assert not silence(group="client Backoffice").matches(ALERT, "acme")
    assert not silence(rule="org-connection").matches(ALERT, "acme")
    assert not silence(severity="warning").matches(ALERT, "acme")
    assert not silence(tenant="globex").matches(ALERT, "acme")
    ungrouped = dataclasses.replace(ALERT, group_key="", rule_name="Mass deletion")
    assert not silence(group="cli_HRIMPORT").matches(ungrouped, "acme")
    kept = book.add(silence(rule="mass-deletion-by-actor"))
    assert silencing(book.all(), ALERT, "acme", now) == kept
    assert silencing(book.all(), ALERT, "acme", now + 60) is None  # ended


def _add(data_dir: str, n: int) -> str:
    book = SilenceBook.of(AppPaths.resolve(data_dir))
    return book.add(new_silence(duration_s=600, author=f"user{n}", rule="org-connection")).id


def test_two_commands_adding_at_once_both_keep_theirs(tmp_path):
    with ProcessPoolExecutor(4) as pool:
        made = list(pool.map(_add, [str(tmp_path)] * 12, range(12)))
    assert sorted(s.id for s in SilenceBook.of(AppPaths.resolve(tmp_path)).all()) == sorted(made)


def test_an_entry_that_is_not_a_silence_is_skipped(tmp_path, caplog):
    path = tmp_path / FILE_NAME
    good = new_silence(duration_s=60, author="alice", rule="org-connection")

    path.write_bytes(
        orjson.dumps({"version": 1, "silences": [entry_of(good), {"id": "x y", "author": ""}, "junk"]})
    )
    assert [s.id for s in SilenceBook(path).all()] == [good.id]
    path.write_text("{not json")
    assert SilenceBook(path).all() == []
    assert sum("skipped" in r.message for r in caplog.records) == 2
