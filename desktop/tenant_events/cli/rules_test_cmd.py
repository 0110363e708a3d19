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
from pathlib import Path
from typing import Any

import orjson
import yaml

from tenant_events.alerts.backtest import backtest
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.fixtures import run_rule_tests
from tenant_events.alerts.from_settings import rule_set, value_lists
from tenant_events.alerts.rule_model import Rule, load_rules
from tenant_events.alerts.sigma_rules.reader import bounded_bytes, check_expansion
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import add_data_dir, add_tenant
from tenant_events.errors import ConfigError, UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.health import database_errors

EXIT_FAILED = 1
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


def file_entries(path: Path) -> list[dict[str, Any]]:
    """The rule entries of a YAML or JSON file, within the limits `rules import` keeps (a regular file, its
    size, aliases that do not explode); ConfigError naming the file when it cannot be read."""
    try:
        text = bounded_bytes(path).decode("utf-8")
        doc = orjson.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        check_expansion(doc)
    except (OSError, UnicodeDecodeError, orjson.JSONDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)
        if mark is not None and problem:
            reason = f"line {mark.line + 1}: {problem}"
        else:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(str(path), f"cannot be read as rules: {reason}") from None
    except ValueError as exc:  # the limits (after the decoding errors, which are ValueErrors too)
        raise ConfigError(str(path), f"cannot be read as rules: {exc}") from None
    except RecursionError:
        raise ConfigError(str(path), "cannot be read as rules: it nests too deeply") from None
    if isinstance(doc, dict) and isinstance(doc.get("rules"), list):
        doc = doc["rules"]
    entries = doc if isinstance(doc, list) else [doc]
    if not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(str(path), "holds no rule: expected a rule, a list of rules or {rules: [...]}")
    return entries


def _rules(args: argparse.Namespace) -> tuple[list[Rule], dict[str, frozenset[str]]]:
    settings = load_settings(AppPaths.resolve(args.data_dir)).alerts
    lists = value_lists(settings)
    target = args.target
    if target and (Path(target).suffix in (".yml", ".yaml", ".json") or Path(target).exists()):
        path = Path(target)
        ruleset = load_rules(file_entries(path), (), lists=settings.lists)
        if ruleset.errors:
            first = ruleset.errors[0]
            raise ConfigError(
                f"{path}: alert rule {first.rule}",
                f"{first.field + ': ' if first.field else ''}{first.message}",
            )
        return list(ruleset.rules), lists
    ruleset = rule_set(settings)
    if target:
        rule = ruleset.get(target)
        if rule is None:
            known = ", ".join(r.id for r in ruleset.rules)
            raise ConfigError("rules test", f"no alert rule {target!r}", f"known: {known}")
        return [rule], lists
    return [r for r in ruleset.rules if r.tests], lists


def _budgets(args: argparse.Namespace, rules: list[Rule]) -> int:
    """Each rule's noise budget (`max_alerts_per_day`) checked on the last BUDGET_DAYS of stored events, when a
    tenant's store can be told; the number of days over a budget."""
    budgeted = [r for r in rules if r.max_alerts_per_day is not None]
    if not budgeted:
        return 0
    paths = AppPaths.resolve(args.data_dir)
    try:
        database = database_for(paths, args.tenant)
    except UserFixableError as exc:
        print(f"--   noise budgets not checked: {exc}")
        return 0
    settings = load_settings(paths).alerts
    now = time.time()
    over = 0
    with database_errors(database), AlertInbox(database) as inbox:
        for rule in budgeted:
            report = backtest(
                inbox,
                rule,
                hours=settings.working_hours,
                profile=database.stem,
                since_ms=int((now - BUDGET_DAYS * 86_400) * 1000),
                now=now,
            )
            over += len(report.over)
            days = ", ".join(f"{d} ({n})" for d, n in report.over.items())
            verdict = f"over it on {days}" if days else f"within it on each of the last {BUDGET_DAYS} days"
            mark = "FAIL" if days else "ok  "
            print(
                f"{mark} {rule.id}: budget {rule.max_alerts_per_day} alerts a day, {verdict} ({database.stem})"
            )
    return over


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
