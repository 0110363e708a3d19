"""`tenant-events rules backtest RULE|FILE [--since 90d|all]`: the alerts a rule would have raised over the stored
history, day by day, with the difference from the rule as it stands and the days over its noise budget
(`max_alerts_per_day`).

    rules backtest mass-deletion-by-actor            the rule in effect, over everything stored
    rules backtest my-change.yml --since 90d         a changed rule from a file (same id: compared with the
                                                     rule as it stands), over the last 90 days

Exit codes: 0 done, no day over a budget · 1 a day over its rule's budget · 3 no such rule, or a file that
cannot be read · 5 storage.
"""

from __future__ import annotations

import argparse
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tenant_events.alerts.backtest import Backtest, backtests
from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.rule_model import Rule
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.cli.rule_files import EXIT_FAILED, rules_for
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.health import database_errors

_SINCE = re.compile(r"^(\d+)\s*d$")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "backtest",
        help="the alerts a rule would have raised over the stored history, per day",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_dir(p)
    add_tenant(p, "which tenant's events (default: the only one)")
    p.add_argument("target", metavar="RULE|FILE", help="a rule id, or a YAML/JSON file of rules")
    p.add_argument("--since", default="all", metavar="90d|all", help="how far back (default: all)")
    p.set_defaults(run=run)


def since_ms(text: str, now: float) -> int:
    if text.strip() == "all":
        return 0
    m = _SINCE.match(text.strip())
    if not m or not 0 < int(m.group(1)) <= 36_500:
        raise ConfigError("--since", f"{text!r} is not a number of days like 90d, or all")
    return int((now - int(m.group(1)) * 86_400) * 1000)


def backtest_reports(
    paths: AppPaths, database: Path, rules: list[Rule], *, since: int, now: float, compare: bool
) -> list[Backtest]:
    """The report path of `rules backtest` and of `rules test`'s noise budgets: every rule backtested on a
    tenant's database from `since` (unix ms, 0: the first stored event) in one pass; with `compare`, each beside
    the rule of the same id in effect."""
    settings = load_settings(paths).alerts
    standing = {r.id: r for r in rule_set(settings).rules} if compare else None
    with database_errors(database), AlertInbox(database) as inbox:
        reports = backtests(
            inbox,
            rules,
            hours=settings.working_hours,
            profile=database.stem,
            standing=standing,
            since_ms=since,
            now=now,
        )
    return reports


def run(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    settings = load_settings(paths).alerts
    now = time.time()
    start = since_ms(args.since, now)
    rules = rules_for(args.target, settings, "rules backtest")
    database = database_for(paths, args.tenant)
    reports = backtest_reports(paths, database, rules, since=start, now=now, compare=True)
    frm = "the first stored event" if not start else datetime.fromtimestamp(start / 1000, UTC).date()
    for report in reports:
        head = f"{report.name} ({report.rule_id}), from {frm} to now (read in {report.seconds:.1f} s):"
        print(shown(head, None))
        for line in report.lines():
            print(f"  {line}")
    return EXIT_FAILED if any(r.over for r in reports) else 0
