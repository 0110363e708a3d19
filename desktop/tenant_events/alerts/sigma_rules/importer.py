"""Imported Sigma rules joined to the settings' alert rules, all or nothing.

A Sigma rule becomes an ordinary rule entry (listed, switched on and off, tried on history) marked as Sigma's.
Importing a rule again replaces the one imported before under the same id. A Sigma rule may take neither the id
of a rule written by hand nor a built-in rule's: a built-in replaced by a Sigma rule would keep its name in the
list but lose its explanation and its fixtures. Only a built-in exactly as it is (what `rules export` writes of
an unedited one) is let through; it changes nothing. Each entry is validated by the rule model, and the first
invalid one refuses the whole import with the file, the rule and the field named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.rule_model import Rule, load_rules
from tenant_events.alerts.sigma_rules.reader import SigmaEntry, SigmaRefused, builtin_taken

_BUILTIN = {r.id: r for r in BUILTIN_RULES}


@dataclass(frozen=True, slots=True)
class Imported:
    """The settings with the imported rules in, and those rules (as validated)."""

    alerts: AlertSettings
    rules: tuple[Rule, ...]
    replaced: tuple[str, ...]  # ids of rules the import replaced


def _stored(rule: Rule) -> dict[str, Any]:
    """The settings entry of a validated rule: a built-in's only what differs, one's own rule in full."""
    base = _BUILTIN.get(rule.id)
    if base is None:
        return rule.model_dump(mode="json", exclude_defaults=True) | {
            "id": rule.id,
            "name": rule.name,
            "types": rule.types,
        }
    was, now = base.model_dump(mode="json"), rule.model_dump(mode="json")
    return {"id": rule.id, **{k: v for k, v in now.items() if was.get(k) != v}}


def merge_imported(alerts: AlertSettings, found: list[SigmaEntry]) -> Imported:
    """`alerts` with the rules of `found` added (or replacing earlier imports); SigmaRefused, and nothing
    changed, when any one cannot be."""
    rules = [f.rule for f in found]
    seen: dict[str, SigmaEntry] = {}
    for f, rule in zip(found, rules, strict=True):
        if rule.id in seen:
            other = seen[rule.id]
            raise SigmaRefused(
                f.path,
                f.label,
                f"its id {rule.id!r} is also {other.label}'s in {other.path}: give one of them another name",
            )
        seen[rule.id] = f
        if rule.id in _BUILTIN and len(_stored(rule)) > 1:
            raise SigmaRefused(f.path, f.label, builtin_taken(rule.id))
    kept: list[dict[str, Any]] = []
    replaced: list[str] = []
    for entry in alerts.rules:
        raw_id = entry.get("id") if isinstance(entry, dict) else None
        # a built-in's id here is the built-in as it is (any other was refused): an edit of the built-in stays
        if isinstance(raw_id, str) and raw_id in seen and raw_id not in _BUILTIN:
            if entry.get("origin") != "sigma":
                f = seen[raw_id]
                raise SigmaRefused(
                    f.path,
                    f.label,
                    f"its id {raw_id!r} is a rule of your own: give the Sigma rule "
                    "another name (its `name:`)",
                )
            replaced.append(raw_id)
            continue
        kept.append(entry)
    entries = kept + [e for e in map(_stored, rules) if len(e) > 1]  # a built-in as it is needs no entry
    before = {str(e) for e in load_rules(alerts.rules, BUILTIN_RULES, lists=alerts.lists).errors}
    for error in load_rules(entries, BUILTIN_RULES, lists=alerts.lists).errors:
        if str(error) not in before:
            culprit = seen.get(error.rule.strip("'"))
            where = f"{error.field}: " if error.field else ""
            if culprit is None:
                raise SigmaRefused("settings", error.rule, where + error.message)
            raise SigmaRefused(culprit.path, culprit.label, where + error.message)
    return Imported(alerts.model_copy(update={"rules": entries}), tuple(rules), tuple(replaced))
