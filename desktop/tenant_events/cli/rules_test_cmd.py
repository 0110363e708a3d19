"""`tenant-events rules test [RULE|FILE]`: rules tested like code — every fixture (events that must fire the rule,
events that must not) run through the real evaluator, the built-in pack's included.

    rules test                 every rule in effect that has fixtures (built-in and your own)
    rules test temporary-elevation
    rules test my-rules.yml    the rules in a YAML or JSON file: one rule, a list, or {"rules": [...]}

A rule of your own carries fixtures under `tests:` (alerts/rule_parts.py RuleTest). A rule with a noise budget
(`max_alerts_per_day`) is also backtested on the last 30 days of a stored tenant (`--tenant`, or the only one)
and any day over it reported. Exit codes: 0 every fixture passed · 1 a fixture failed or a day was over a budget · 3 no such rule, or a file or rule that cannot be read (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.fixtures import run_rule_tests
from tenant_events.alerts.from_settings import rule_set, value_lists
from tenant_events.alerts.rule_model import Rule
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.cli.rule_files import EXIT_FAILED, rules_for
from tenant_events.cli.rules_backtest_cmd import backtest_reports
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings

BUDGET_DAYS = 30  # how far back `rules test` checks a rule's noise budget


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "test",
        help="run the rules' fixtures",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_data_dir(p)
    p.add_argument("target", nargs="?", metavar="RULE|FILE", help="a rule id, or a YAML/JSON file of rules")
    add_tenant(p, "whose stored events a rule's noise budget is checked on (default: the only one)")
    p.set_defaults(run=run)


def _rules(args: argparse.Namespace) -> tuple[list[Rule], dict[str, frozenset[str]]]:
    settings = load_settings(AppPaths.resolve(args.data_dir)).alerts
    lists = value_lists(settings)
    if args.target:
        return rules_for(args.target, settings, "rules test"), lists
    ruleset = rule_set(settings)
    return [r for r in ruleset.rules if r.tests], lists


def _budgets(args: argparse.Namespace, rules: list[Rule]) -> int:
    """Each rule's noise budget (`max_alerts_per_day`) checked on the last BUDGET_DAYS of stored events, when a
    tenant's store can be told (the backtest's report path, in one pass); the number of days over a budget."""
    budgeted = [r for r in rules if r.max_alerts_per_day is not None]
    if not budgeted:
        return 0
    paths = AppPaths.resolve(args.data_dir)
    try:
        database = database_for(paths, args.tenant)
    except UserFixableError as exc:
        print(f"--   noise budgets not checked: {exc}")
        return 0
    now = time.time()
    since = int((now - BUDGET_DAYS * 86_400) * 1000)
    reports = backtest_reports(paths, database, budgeted, since=since, now=now, compare=False)
    for report in reports:
        print(report.verdict(database.stem))
    return sum(len(r.over) for r in reports)


def run(args: argparse.Namespace) -> int:
    rules, lists = _rules(args)
    results = []
    for rule in rules:
        if not rule.tests:
            builtin = any(b.id == rule.id for b in BUILTIN_RULES)
            print(f"--   {rule.id}: no fixtures{' (the built-in has none)' if builtin else ''}")
            continue
        for result in run_rule_tests(rule, lists=lists):
            print(result.line())
            results.append(result)
    failed = sum(not r.passed for r in results)
    over = _budgets(args, rules)
    print(f"tenant-events: {len(results)} fixtures of {len(rules)} rules, {failed} failed", file=sys.stderr)
    return EXIT_FAILED if failed or over else 0
