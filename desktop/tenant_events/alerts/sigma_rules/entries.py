"""The parts of a Sigma rule every imported rule has: id, name, explanation, severity from `level`, the
logsource check, and the `tenant_events` custom attribute (what a rule holds that Sigma has no words for)."""

from __future__ import annotations

import re
from typing import Any, Final

from sigma.correlations import SigmaCorrelationRule
from sigma.rule import SigmaRule
from sigma.rule.attributes import SigmaLevel

from tenant_events.alerts.sigma_rules.detection import Detection, translate
from tenant_events.alerts.sigma_rules.refusal import Refusal

EXTENSION: Final = "tenant_events"  # a custom attribute: what a rule holds that Sigma has no words for
LOGSOURCE: Final = ("auth0", "events")
_TECHNIQUE: Final = re.compile(r"^t\d{4}(?:\.\d{3})?$")  # attack.t1098.003 → T1098.003; tactics are skipped
_LEVELS: Final = {
    "informational": "info",
    "low": "info",
    "medium": "warning",
    "high": "warning",
    "critical": "critical",
}
_EXTENSION_KEYS: Final = frozenset(
    {
        "enabled",
        "notify",
        "coalesce_minutes",
        "time_of_day",
        "tenants",
        "include_test_events",
        "max_alerts_per_day",
        "conditions",
        "novelty",
        "state",
        "tests",
        "group_by",
        "types",
        "any_of",
        "except",
    }
)


def _severity(rule: SigmaRule | SigmaCorrelationRule) -> str:
    level: SigmaLevel | None = rule.level
    return _LEVELS.get(level.name.lower(), "warning") if level is not None else "warning"


def _rule_id(rule: SigmaRule | SigmaCorrelationRule) -> str:
    """The rule's id: its Sigma `name` when that is one already, else made from the title."""
    raw = rule.name or rule.title or str(rule.id or "")
    slug = re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")[:64].strip("-")
    return slug or "sigma-rule"


def common(rule: SigmaRule | SigmaCorrelationRule) -> dict[str, Any]:
    name = (rule.title or rule.name or "Sigma rule").strip()
    text = " ".join((rule.description or "").split())
    entry: dict[str, Any] = {
        "id": _rule_id(rule),
        "name": name if len(name) <= 80 else name[:79] + "…",
        "explanation": text if len(text) <= 300 else text[:299] + "…",
        "severity": _severity(rule),
        "origin": "sigma",
    }
    techniques = [t.name.upper() for t in rule.tags if t.namespace == "attack" and _TECHNIQUE.match(t.name)]
    if techniques:
        entry["mitre"] = list(dict.fromkeys(techniques))[:6]
    extension = rule.custom_attributes.get(EXTENSION)
    if extension is not None:
        if not isinstance(extension, dict):
            raise Refusal(EXTENSION, "must be a map of rule fields")
        for key in extension:
            if key not in _EXTENSION_KEYS:
                raise Refusal(
                    f"{EXTENSION}.{key}",
                    "is not a rule field Sigma lacks words for "
                    f"(known: {', '.join(sorted(_EXTENSION_KEYS))})",
                )
    return entry


def _check_logsource(rule: SigmaRule) -> None:
    source = rule.logsource
    if (source.product, source.service) != LOGSOURCE or source.category is not None:
        shown = ", ".join(
            f"{k}: {v}"
            for k, v in (
                ("category", source.category),
                ("product", source.product),
                ("service", source.service),
            )
            if v
        )
        raise Refusal(
            "logsource", f"{{{shown}}} is not this app's events (want product: auth0, service: events)"
        )


def base_detection(rule: SigmaRule) -> Detection:
    _check_logsource(rule)
    return translate(rule)


def extension_of(rule: SigmaRule | SigmaCorrelationRule) -> dict[str, Any]:
    value = rule.custom_attributes.get(EXTENSION)
    return dict(value) if isinstance(value, dict) else {}


def apply_extension(entry: dict[str, Any], extension: dict[str, Any]) -> dict[str, Any]:
    extra_conditions = extension.pop("conditions", None)
    if extra_conditions is not None:
        if not isinstance(extra_conditions, list):
            raise Refusal(f"{EXTENSION}.conditions", "must be a list of conditions")
        entry["conditions"] = [*entry.get("conditions", []), *extra_conditions]
    extra_excepts = extension.pop("except", None)
    if extra_excepts is not None:
        if not isinstance(extra_excepts, list):
            raise Refusal(f"{EXTENSION}.except", "must be a list of exceptions")
        entry["except"] = [*entry.get("except", []), *extra_excepts]
    if extension.get("any_of") is not None and entry.get("any_of"):
        raise Refusal(
            f"{EXTENSION}.any_of",
            "the detection has alternatives (an 'or' across fields) already: a rule holds one list of them",
        )
    return {**entry, **extension}


def detection_entry(rule: SigmaRule) -> dict[str, Any]:
    """The rule entry of a Sigma detection rule that stands alone."""
    entry = common(rule)
    found = base_detection(rule)
    entry.update(types=found.types, conditions=found.conditions)
    if found.any_of:
        entry["any_of"] = found.any_of
    if found.excepts:
        entry["except"] = found.excepts
    return apply_extension(entry, extension_of(rule))
