"""The rules in effect for one tenant, built from the settings file: what the CLI and the app start with."""

from __future__ import annotations

import time
from collections.abc import Callable

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.evaluator import Evaluator
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.alerts.rule_model import RuleSet, load_rules
from tenant_events.errors import ConfigError


class BadRules(ConfigError):
    """One or more alert rules in the settings are invalid; the message names the first, with its field."""

    def __init__(self, ruleset: RuleSet) -> None:
        first, more = ruleset.errors[0], len(ruleset.errors) - 1
        extra = f" (and {more} more)" if more else ""
        super().__init__(
            f"alert rule {first.rule}",
            f"{first.field + ': ' if first.field else ''}{first.message}{extra}",
            "fix alerts.rules in the settings file; `tenant-events rules` lists every problem",
        )
        self.ruleset = ruleset


def rule_set(settings: AlertSettings) -> RuleSet:
    """The built-in rules with the settings' changes, and the settings' own rules."""
    return load_rules(settings.rules, BUILTIN_RULES, lists=settings.lists)


def value_lists(settings: AlertSettings) -> dict[str, frozenset[str]]:
    """The settings' named value lists, as rules match them."""
    return {name: frozenset(values) for name, values in settings.lists.items()}


def build_evaluator(
    settings: AlertSettings,
    profile: str,
    *,
    strict: bool = True,
    clock: Callable[[], float] = time.time,
    by_received: bool = False,
) -> Evaluator:
    """An evaluator of the enabled rules for the tenant `profile`; `strict`: BadRules if any rule is invalid
    (otherwise the valid ones run and the caller shows `rule_set(settings).errors`); `by_received`: see
    RuleEngine."""
    ruleset = rule_set(settings)
    if strict and ruleset.errors:
        raise BadRules(ruleset)
    engine = RuleEngine(
        ruleset.rules,
        hours=settings.working_hours,
        profile=profile,
        catch_up_after_s=settings.catch_up_after_minutes * 60,
        clock=clock,
        by_received=by_received,
        lists=value_lists(settings),
    )
    return Evaluator(engine)
