"""`tenant-events rules backtest` over a store holding weeks of history, run as a user runs it: the alerts a rule
would have raised per day, a changed rule from a file compared day by day with the rule as it stands, and the
days over its noise budget (`max_alerts_per_day`), also reported by `rules test`."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import datetime

import yaml

from helpers.alert_events import event
from tenant_events.paths import AppPaths
from tenant_events.store import Batch, StoreWriter

DAY = 86_400.0
HR = ("cli_HRIMPORT", "HR Import")
SCRIPT = ("cli_SCRIPT", "Backoffice Script")


def _store(data_dir) -> None:
    """Three days with deletions by the HR sync (12 in 2 min, each day), one day with a script's too."""
    paths = AppPaths.resolve(data_dir).ensure()
    paths.databases_dir.mkdir(parents=True, exist_ok=True)
    # 08:00 local time ten days ago: each day's deletions (the script's an hour after the sync's) fall within that
    # day whatever the time the test runs at (from 23:00 on, a base of "now" put the script's on the next day)
    base = (
        datetime.fromtimestamp(time.time() - 10 * DAY)
        .replace(hour=8, minute=0, second=0, microsecond=0)
        .timestamp()
    )
    rows = []
    for day in range(3):
        rows += [event("user.deleted", base + day * DAY + i * 10 - _base(), client=HR) for i in range(12)]
    rows += [event("user.deleted", base + 1 * DAY + 3600 + i * 5 - _base(), client=SCRIPT) for i in range(12)]
    writer = StoreWriter(paths.database_file("acme"))
    try:
        writer.commit_sync(Batch(events=rows, cursor="c1"))
    finally:
        writer.close()


def _base() -> float:
    from helpers.alert_events import BASE

    return BASE.timestamp()


def cli(data_dir, *args):
    return subprocess.run(
        [sys.executable, "-m", "tenant_events", "rules", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_backtest_per_day_a_changed_rule_against_the_rule_as_it_stands_and_the_budget(tmp_path):
    _store(tmp_path)
    done = cli(tmp_path, "backtest", "mass-deletion-by-actor")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "Mass deletion by one actor (mass-deletion-by-actor), from the first stored event"
    )
    assert [line.split()[1:] for line in lines[2:-1]] == [
        ["1", "1", "+0"],
        ["2", "2", "+0"],
        ["1", "1", "+0"],
    ]
    assert lines[-1].strip() == (
        "4 alerts (4 firings) on 3 days; as it stands 4 (+0); 0 days over the budget of 5 a day"
    )

    changed = tmp_path / "change.yml"
    rule = {
        "id": "mass-deletion-by-actor",
        "name": "Mass deletion by one actor",
        "types": ["user.deleted", "group.deleted", "organization.deleted"],
        "threshold": {"count": 10, "window_seconds": 600},
        "group_by": ["context.client.id|context.request.ip"],
        "except": [{"field": "context.client.id", "op": "equals", "value": "cli_HRIMPORT"}],
        "max_alerts_per_day": 1,
    }
    changed.write_text(yaml.safe_dump(rule))
    done = cli(tmp_path, "backtest", str(changed), "--since", "30d")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[2:-1]]
    assert [(r[1], r[2], r[3]) for r in rows] == [("0", "1", "-1"), ("1", "2", "-1"), ("0", "1", "-1")]
    assert (
        "1 alert (1 firing) on 1 day; as it stands 4 (-3); 0 days over the budget of 1 a day" in done.stdout
    )

    rule["except"] = []  # the budget: one a day; the day with two is over it
    changed.write_text(yaml.safe_dump(rule))
    done = cli(tmp_path, "backtest", str(changed))
    assert done.returncode == 1 and "over the budget of 1" in done.stdout
    done = cli(tmp_path, "test", str(changed))
    assert done.returncode == 1
    assert "FAIL mass-deletion-by-actor: budget 1 alerts a day, over it on" in done.stdout

    for args, line in [
        (("backtest", "nope"), "no alert rule 'nope'"),
        (("backtest", "mass-deletion", "--since", "ninety"), "--since: 'ninety' is not a number of days"),
    ]:
        done = cli(tmp_path, *args)
        assert done.returncode == 3 and line in done.stderr, done.stderr
