"""Rules from a YAML or JSON file, for `rules test`, `rules backtest` (and `rules import`'s limits): one rule, a
list, or {"rules": [...]}, read within the limits `rules import` keeps and checked as the settings check them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import orjson
import yaml

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.rule_model import Rule, load_rules
from tenant_events.alerts.sigma_rules.reader import bounded_bytes, check_expansion
from tenant_events.errors import ConfigError

EXIT_FAILED: Final = 1  # a fixture failed, or a day was over a rule's noise budget


def rules_for(target: str, settings: AlertSettings, command: str) -> list[Rule]:
    """RULE|FILE: the rules of the file, or the rule in effect with that id; ConfigError naming what is wrong."""
    if Path(target).suffix in (".yml", ".yaml", ".json") or Path(target).exists():
        return rules_in_file(Path(target), settings.lists)
    ruleset = rule_set(settings)
    rule = ruleset.get(target)
    if rule is None:
        known = ", ".join(r.id for r in ruleset.rules)
        raise ConfigError(command, f"no alert rule {target!r}", f"known: {known}")
    return [rule]


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


def rules_in_file(path: Path, lists: Iterable[str]) -> list[Rule]:
    """The file's rules (`lists`: the names of the value lists they may use); ConfigError naming the file, the rule and the field of the first that is wrong."""
    ruleset = load_rules(file_entries(path), (), lists=lists)
    if ruleset.errors:
        first = ruleset.errors[0]
        raise ConfigError(
            f"{path}: alert rule {first.rule}", f"{first.field + ': ' if first.field else ''}{first.message}"
        )
    return list(ruleset.rules)
