"""Alert rules evaluated in the Qt-free core: rules as data, exactly-once evaluation over stored events, the
decisions the inbox and notifications need (quiet hours, urgency, catch-up summaries)."""

from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.evaluator import Evaluator, StepResult
from tenant_events.alerts.rule_engine import RuleEngine
from tenant_events.alerts.rule_model import (
    Condition,
    Rule,
    RuleError,
    RuleSet,
    Threshold,
    TimeOfDay,
    load_rules,
)

__all__ = [
    "BUILTIN_RULES",
    "Condition",
    "Evaluator",
    "Rule",
    "RuleEngine",
    "RuleError",
    "RuleSet",
    "StepResult",
    "Threshold",
    "TimeOfDay",
    "load_rules",
]
