"""`tenant-events rules`: the alert rules in effect (built-in and your own), checked; `--try` one on history.

Rules live in the settings file under `alerts.rules`: an entry with a built-in rule's `id` changes only the fields
it names (e.g. {"id": "off-hours", "enabled": false}); any other entry is a rule of its own. Every bad entry is
listed with the rule and the field at fault, and the exit code is then 3.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.history import try_rule
from tenant_events.cli import rules_backtest_cmd, rules_sigma, rules_test_cmd
from tenant_events.cli.export_cmd import database_for
from tenant_events.cli.options import add_data_dir, add_tenant, number
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.store.health import database_errors

EXIT_BAD_RULES = ConfigError.exit_code


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rules",
        help="list and check the alert rules, or try one on stored history",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 all rules valid · 2 usage · 3 a rule is invalid or unknown · 5 storage (--try)",
    )
    add_data_dir(p)
    p.add_argument(
        "--check", action="store_true", help="only report problems (quiet when every rule is valid)"
    )
    p.add_argument(
        "--try", dest="try_rule", metavar="RULE", help="how often RULE would have fired on stored events"
    )
    add_tenant(p, "with --try: which tenant's events (default: the only one)")
    p.add_argument(
        "--days",
        metavar="N",
        type=number(0, 3650, above=True),
        default=7.0,
        help="with --try: how far back, up to 3650 (default 7)",
    )
    p.set_defaults(run=run)
    actions = p.add_subparsers(dest="rules_action", metavar="ACTION", title="actions")
    rules_test_cmd.register(actions)
    rules_backtest_cmd.register(actions)
    rules_sigma.register(actions)


def run(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    settings = load_settings(paths).alerts
    ruleset = rule_set(settings)
    if args.try_rule:
        rule = ruleset.get(args.try_rule)
        if rule is None:
            known = ", ".join(r.id for r in ruleset.rules)
            raise ConfigError("--try", f"no alert rule {args.try_rule!r}", f"known: {known}")
        database = database_for(paths, args.tenant)
        with database_errors(database), AlertInbox(database) as inbox:
            trial = try_rule(inbox, rule, hours=settings.working_hours, profile=database.stem, days=args.days)
        print(shown(f"{rule.name} ({rule.id}) {trial.sentence()}", None))  # (a Sigma file's words)
        return 0
    if not args.check:
        width = max((len(r.id) for r in ruleset.rules), default=0)  # the ids in one column
        for rule in ruleset.rules:
            state = "on " if rule.enabled else "off"
            mark = " [Sigma]" if rule.origin == "sigma" else ""
            line = f"{state}  {rule.severity:<8}  {rule.id:<{width}}  {rule.name}{mark}: {rule.explanation}"
            print(shown(line, None))
    for error in ruleset.errors:
        print(shown(f"tenant-events: {error}", None), file=sys.stderr)
    if ruleset.errors:
        return EXIT_BAD_RULES
    if args.check:
        print(f"tenant-events: {len(ruleset.rules)} alert rules, all valid", file=sys.stderr)
    return 0
