"""Sigma files → alert rule entries (the settings file's `alerts.rules` form), all or nothing.

    FILE.yml | DIR ──▶ pySigma (YAML, rule syntax, modifiers, references) ──▶ logsource auth0/events
        ──▶ detection rules: types + conditions (detection.py) ──▶ correlations: threshold, distinct count,
            sequence, group-by ──▶ entries validated by the rule model

Every rule of every file must translate; the first one that cannot is refused with one line naming the file,
the rule and the field or modifier (`SigmaRefused`), and then nothing at all is imported. A detection rule that
a correlation uses (without `generate: true`) is only part of that correlation, as in Sigma.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import ValidationError
from sigma.collection import SigmaCollection
from sigma.correlations import (
    SigmaCorrelationCondition,
    SigmaCorrelationConditionOperator,
    SigmaCorrelationRule,
    SigmaCorrelationType,
)
from sigma.exceptions import SigmaError, SigmaRegularExpressionError
from sigma.rule import SigmaRule
from sigma.rule.attributes import SigmaLevel
from sigma.rule.base import SigmaYAMLLoader

from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.rule_model import Condition, Rule, load_rules
from tenant_events.alerts.sigma_rules.detection import Detection, Refusal, translate
from tenant_events.errors import ConfigError

EXTENSION: Final = "tenant_events"  # a custom attribute: what a rule holds that Sigma has no words for
LOGSOURCE: Final = ("auth0", "events")
SIGMA_SUFFIXES: Final = (".yml", ".yaml")
MAX_FILES: Final = 2000
MAX_FILE_BYTES: Final = 1_000_000
_LEVELS: Final = {"informational": "info", "low": "info", "medium": "warning", "high": "warning",
                  "critical": "critical"}  # fmt: skip
_EXTENSION_KEYS: Final = frozenset({
    "enabled", "notify", "coalesce_minutes", "time_of_day", "tenants", "include_test_events", "conditions",
    "novelty", "state", "tests", "group_by", "types",
})  # fmt: skip


def printable(text: str) -> str:
    """`text` with control characters escaped (file content is shown on a terminal and in the window)."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode() for c in text)


class SigmaRefused(ConfigError):
    """A Sigma file or rule that cannot be imported; nothing was imported."""

    def __init__(self, path: Path | str, rule: str, message: str) -> None:
        where = f"{path}: Sigma rule {rule}" if rule else f"{path}"
        super().__init__(printable(where), printable(message), "nothing was imported")
        self.path, self.rule = str(path), rule


@dataclass
class _Loaded:
    collection: SigmaCollection
    files: dict[int, Path] = field(default_factory=dict)  # id(rule) → the file it came from


def sigma_files(target: Path) -> list[Path]:
    """The Sigma files of `target`: itself, or every *.yml / *.yaml under it (sorted, hidden ones skipped)."""
    if target.is_dir():
        found = sorted(p for p in target.rglob("*") if p.suffix in SIGMA_SUFFIXES and p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(target).parts))  # fmt: skip
        if not found:
            raise SigmaRefused(target, "", "no .yml or .yaml files in this folder")
        if len(found) > MAX_FILES:
            raise SigmaRefused(target, "", f"{len(found)} files; at most {MAX_FILES} at a time")
        return found
    if not target.exists():
        raise SigmaRefused(target, "", "no such file or folder")
    return [target]


def _label(rule: SigmaRule | SigmaCorrelationRule, index: int) -> str:
    return repr(rule.title or rule.name or str(rule.id or "") or f"#{index}")


def _load(paths: Iterable[Path]) -> _Loaded:
    collections: list[SigmaCollection] = []
    files: dict[int, Path] = {}
    for path in paths:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise SigmaRefused(path, "", f"larger than {MAX_FILE_BYTES // 1_000_000} MB")
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SigmaRefused(path, "", f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            docs = list(yaml.load_all(text, Loader=SigmaYAMLLoader))  # aliases stay shared, not expanded
            for number, doc in enumerate(docs, 1):
                if doc is not None and not isinstance(doc, dict):
                    raise SigmaRefused(path, "", f"YAML document {number} is not a map of rule fields")
            collection = SigmaCollection.from_dicts(docs, collect_errors=True, resolve_references=False)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f"line {mark.line + 1}: " if mark is not None else ""
            raise SigmaRefused(
                path, "", f"not valid YAML: {line}{getattr(exc, 'problem', None) or exc}"
            ) from None
        except SigmaError as exc:
            raise SigmaRefused(path, "", str(exc)) from None
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a shape pySigma does not expect
            raise SigmaRefused(path, "", f"not a Sigma rule file ({type(exc).__name__}: {exc})") from None
        if collection.errors and not any(r.errors for r in collection.rules):
            raise SigmaRefused(path, "", str(collection.errors[0]))
        if not collection.rules:
            raise SigmaRefused(path, "", "holds no Sigma rule")
        for index, rule in enumerate(collection.rules, 1):
            if rule.errors:
                raise SigmaRefused(path, _label(rule, index), _explained(rule.errors[0], text, rule))
            files[id(rule)] = path
        collections.append(collection)
    merged = SigmaCollection.merge(collections, resolve_references=False)
    for index, rule in enumerate(merged.rules, 1):
        if isinstance(rule, SigmaCorrelationRule):
            try:
                rule.resolve_rule_references(merged)
            except SigmaError as exc:
                raise SigmaRefused(files[id(rule)], _label(rule, index), str(exc)) from None
    return _Loaded(merged, files)


def _explained(error: SigmaError, text: str, rule: SigmaRule | SigmaCorrelationRule) -> str:
    """pySigma's message, with the field named for a regular expression RE2 cannot compile."""
    message = str(error)
    if not isinstance(error, SigmaRegularExpressionError):
        return message
    pattern, _, reason = message.removeprefix("Regular expression '").partition("' is invalid: ")
    reason = reason.removeprefix("b'").removesuffix("'").replace("\\\\", "\\")
    for doc in yaml.safe_load_all(text):
        detection = doc.get("detection") if isinstance(doc, dict) and doc.get("title") == rule.title else None
        for selection in detection.values() if isinstance(detection, dict) else ():
            for key, value in selection.items() if isinstance(selection, dict) else ():
                if "|re" in str(key) and pattern in (value if isinstance(value, list) else [value]):
                    return f"{key}: regular expression {pattern!r} does not compile in RE2: {reason}"
    return f"regular expression {pattern!r} does not compile in RE2: {reason}"


def _severity(rule: SigmaRule | SigmaCorrelationRule) -> str:
    level: SigmaLevel | None = rule.level
    return _LEVELS.get(level.name.lower(), "warning") if level is not None else "warning"


def _rule_id(rule: SigmaRule | SigmaCorrelationRule) -> str:
    """The rule's id: its Sigma `name` when that is one already, else made from the title."""
    raw = rule.name or rule.title or str(rule.id or "")
    slug = re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")[:64].strip("-")
    return slug or "sigma-rule"


def _common(rule: SigmaRule | SigmaCorrelationRule) -> dict[str, Any]:
    name = (rule.title or rule.name or "Sigma rule").strip()
    text = " ".join((rule.description or "").split())
    entry: dict[str, Any] = {
        "id": _rule_id(rule),
        "name": name if len(name) <= 80 else name[:79] + "…",
        "explanation": text if len(text) <= 300 else text[:299] + "…",
        "severity": _severity(rule),
        "origin": "sigma",
    }
    extension = rule.custom_attributes.get(EXTENSION)
    if extension is not None:
        if not isinstance(extension, dict):
            raise Refusal(EXTENSION, "must be a map of rule fields")
        for key in extension:
            if key not in _EXTENSION_KEYS:
                raise Refusal(f"{EXTENSION}.{key}", "is not a rule field Sigma lacks words for "
                              f"(known: {', '.join(sorted(_EXTENSION_KEYS))})")  # fmt: skip
    return entry


def _check_logsource(rule: SigmaRule) -> None:
    source = rule.logsource
    if (source.product, source.service) != LOGSOURCE or source.category is not None:
        shown = ", ".join(f"{k}: {v}" for k, v in (("category", source.category), ("product", source.product),
                                                   ("service", source.service)) if v)  # fmt: skip
        raise Refusal(
            "logsource", f"{{{shown}}} is not this app's events (want product: auth0, service: events)"
        )


def _detection(rule: SigmaRule) -> Detection:
    _check_logsource(rule)
    return translate(rule)


def _extension(rule: SigmaRule | SigmaCorrelationRule) -> dict[str, Any]:
    value = rule.custom_attributes.get(EXTENSION)
    return dict(value) if isinstance(value, dict) else {}


def _apply_extension(entry: dict[str, Any], extension: dict[str, Any]) -> dict[str, Any]:
    extra_conditions = extension.pop("conditions", None)
    if extra_conditions is not None:
        if not isinstance(extra_conditions, list):
            raise Refusal(f"{EXTENSION}.conditions", "must be a list of conditions")
        entry["conditions"] = [*entry.get("conditions", []), *extra_conditions]
    return {**entry, **extension}


def detection_entry(rule: SigmaRule) -> dict[str, Any]:
    """The rule entry of a Sigma detection rule that stands alone."""
    entry = _common(rule)
    found = _detection(rule)
    entry.update(types=found.types, conditions=found.conditions)
    return _apply_extension(entry, _extension(rule))


def _threshold(cond: SigmaCorrelationCondition, rule_type: str) -> int:
    op = cond.op
    if cond.count != int(cond.count):
        raise Refusal("condition", f"{cond.count} is not a whole number of events")
    if op == SigmaCorrelationConditionOperator.GTE:
        count = int(cond.count)
    elif op == SigmaCorrelationConditionOperator.GT:
        count = int(cond.count) + 1
    else:
        raise Refusal(f"condition.{op.name.lower()}", f"a {rule_type} fires on 'at least': use gte (or gt)")
    return count


def _group(correlation: SigmaCorrelationRule) -> tuple[bool, list[str]]:
    """(per event type, the group keys under data) of the correlation's `group-by`."""
    per_type, keys = False, []
    for name in correlation.group_by or []:
        if name == "type":
            per_type = True
            continue
        if not name.startswith("data.") or len(name) == len("data."):
            raise Refusal(f"group-by {name}", "not an event field: use type or a dotted path under data")
        keys.append("|".join(part.strip().removeprefix("data.") for part in name.split("|")))
    if len(correlation.aliases):
        raise Refusal("aliases", "field aliases cannot be expressed: group by the same field in every rule")
    return per_type, keys


def _same(cond: dict[str, Any]) -> Any:
    """A condition in a form that compares equal however it was written (defaults left out or spelled)."""
    try:
        return Condition.model_validate(cond)
    except ValidationError:
        return repr(cond)


def _rule_conditions(correlation: SigmaCorrelationRule) -> list[Any]:
    """The rule-wide conditions a sequence's extension names (written into each step as well)."""
    extra = _extension(correlation).get("conditions")
    return [_same(c) for c in extra if isinstance(c, dict)] if isinstance(extra, list) else []


def correlation_entry(correlation: SigmaCorrelationRule) -> dict[str, Any]:
    """The rule entry of a Sigma correlation rule over detection rules."""
    entry = _common(correlation)
    kind = correlation.type
    if kind not in (SigmaCorrelationType.EVENT_COUNT, SigmaCorrelationType.VALUE_COUNT,
                    SigmaCorrelationType.TEMPORAL, SigmaCorrelationType.TEMPORAL_ORDERED):  # fmt: skip
        raise Refusal(f"correlation type {kind.name.lower()}", "is not supported (supported: event_count, "
                      "value_count, temporal, temporal_ordered)")  # fmt: skip
    cond = correlation.condition
    if not isinstance(cond, SigmaCorrelationCondition):
        raise Refusal("condition", "an extended (boolean) correlation condition cannot be expressed")
    parts: list[Detection] = []
    for ref in correlation.referenced_rules:
        base = ref.rule
        if isinstance(base, SigmaCorrelationRule):
            raise Refusal(f"rules {ref.reference}", "a correlation of correlations cannot be expressed")
        try:
            parts.append(_detection(base))
        except Refusal as exc:
            raise Refusal(exc.where, f"{exc} (in rule {base.title or ref.reference!r})") from None
    if not parts:
        raise Refusal("rules", "names no rule")
    seconds = correlation.timespan.seconds
    per_type, keys = _group(correlation)
    type_name = kind.name.lower()
    if kind in (SigmaCorrelationType.TEMPORAL, SigmaCorrelationType.TEMPORAL_ORDERED):
        if per_type:
            raise Refusal("group-by type", "a sequence of different events cannot be grouped by event type")
        if cond.op != SigmaCorrelationConditionOperator.GTE or cond.count != len(parts) or cond.fieldref:
            raise Refusal(
                "condition", f"a {type_name} correlation must see every one of its {len(parts)} rules"
            )
        if len(parts) < 2:
            raise Refusal("rules", f"a {type_name} correlation needs two rules or more")
        shared = _rule_conditions(correlation)
        steps = [{"types": p.types, "conditions": [c for c in p.conditions if _same(c) not in shared]}
                 for p in parts]  # fmt: skip
        every = [t for p in parts for t in p.types]
        types = list(dict.fromkeys(every)) if "*" not in every else ["*"]
        entry.update(types=types, sequence={"steps": steps, "within_seconds": seconds,
                                            "ordered": kind == SigmaCorrelationType.TEMPORAL_ORDERED})  # fmt: skip
    else:
        first = parts[0]
        for other in parts[1:]:
            if other.conditions != first.conditions:
                raise Refusal("rules", "counting over rules that differ in more than their event types cannot "
                              "be expressed")  # fmt: skip
        types = [t for t in dict.fromkeys(t for p in parts for t in p.types)]
        count = _threshold(cond, type_name)
        threshold: dict[str, Any] = {"count": count, "window_seconds": seconds, "per_type": per_type}
        if kind == SigmaCorrelationType.VALUE_COUNT:
            counted = cond.fieldref
            if not isinstance(counted, str) or not counted.startswith("data."):
                raise Refusal(
                    f"condition.field {counted}", "not an event field: use a dotted path under data"
                )
            threshold["distinct"] = counted.removeprefix("data.")
        elif count < 2:
            threshold = {}
        entry.update(types=types, conditions=first.conditions)
        if threshold:
            entry["threshold"] = threshold
    if keys:
        entry["group_by"] = keys
    return _apply_extension(entry, _extension(correlation))


@dataclass(frozen=True, slots=True)
class SigmaEntry:
    """One rule made from a Sigma rule: its settings entry, the rule as validated, where it came from."""

    entry: dict[str, Any]
    rule: Rule
    path: Path
    label: str


def _validated(entry: dict[str, Any], lists: Iterable[str]) -> Rule:
    alone = load_rules([entry], BUILTIN_RULES, lists=lists)
    if alone.errors:
        error = alone.errors[0]
        raise Refusal(error.field, error.message)
    rule = alone.get(str(entry["id"]))
    assert rule is not None
    return rule


def read_sigma(target: Path, *, lists: Iterable[str] = ()) -> list[SigmaEntry]:
    """The rules of the Sigma rules in `target` (a file or a folder), validated; SigmaRefused on the first
    rule that cannot be expressed. `lists`: the settings' value lists a rule may name."""
    loaded = _load(sigma_files(target))
    entries: list[SigmaEntry] = []
    for index, rule in enumerate(loaded.collection.get_output_rules(), 1):
        assert isinstance(rule, SigmaRule | SigmaCorrelationRule)
        path, label = loaded.files[id(rule)], _label(rule, index)
        try:
            entry = (
                correlation_entry(rule) if isinstance(rule, SigmaCorrelationRule) else detection_entry(rule)
            )
            entries.append(SigmaEntry(entry, _validated(entry, lists), path, label))
        except Refusal as exc:
            raise SigmaRefused(path, label, str(exc)) from None
        except SigmaError as exc:  # e.g. a condition naming a selection that is not there
            raise SigmaRefused(path, label, str(exc)) from None
        except (TypeError, AttributeError, KeyError) as exc:  # a value of a shape pySigma let through
            raise SigmaRefused(path, label, f"cannot be read ({type(exc).__name__}: {exc})") from None
    return entries
