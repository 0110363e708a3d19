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
from sigma.collection import SigmaCollection
from sigma.correlations import SigmaCorrelationRule
from sigma.exceptions import SigmaError, SigmaRegularExpressionError
from sigma.policy import SigmaPolicy
from sigma.policy.regex_engine import RE2RegexEngine, RegexPattern
from sigma.rule import SigmaRule
from sigma.rule.base import SigmaYAMLLoader, check_alias_expansion

from tenant_events.alerts.builtin_rules import BUILTIN_RULES
from tenant_events.alerts.rule_model import Rule, load_rules
from tenant_events.alerts.rule_parts import re2_compile
from tenant_events.alerts.sigma_rules.correlation import correlation_entry
from tenant_events.alerts.sigma_rules.entries import detection_entry
from tenant_events.alerts.sigma_rules.refusal import Refusal
from tenant_events.errors import ConfigError
from tenant_events.paths import regular_file_bytes

SIGMA_SUFFIXES: Final = (".yml", ".yaml")
MAX_FILES: Final = 2000
MAX_FILE_BYTES: Final = 1_000_000
MAX_TOTAL_BYTES: Final = 20_000_000  # SigmaHQ's whole rule set is about 15 MB of YAML
MAX_RULES: Final = 1000


class _QuietRE2(RE2RegexEngine):
    """pySigma's RE2 engine, except that RE2 does not write a pattern it cannot compile to stderr (raw: a
    Sigma file's escape sequences would reach the terminal); the error still says what is wrong."""

    def compile(self, pattern: str, flags: int = 0) -> RegexPattern:
        inline = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}
        prefix = "".join(v for k, v in inline.items() if int(flags) & int(k))
        compiled: RegexPattern = re2_compile(f"(?{prefix}){pattern}" if prefix else pattern)
        return compiled


_POLICY: Final = SigmaPolicy(regex_engine=_QuietRE2())


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


def bounded_bytes(path: Path) -> bytes:
    """The bytes of one rule file within the limits every reader of rule files keeps (a regular file of at most
    MAX_FILE_BYTES); ValueError saying why not."""
    return regular_file_bytes(path, MAX_FILE_BYTES)


def check_expansion(doc: object) -> None:
    """ValueError when the YAML's aliases expand to a tree far larger than the text ("billion laughs")."""
    try:
        check_alias_expansion(doc)
    except SigmaError as exc:
        raise ValueError(str(exc)) from None


def sigma_files(target: Path) -> list[Path]:
    """The Sigma files of `target`: itself, or every *.yml / *.yaml under it (sorted, hidden ones skipped)."""
    if target.is_dir():
        found = sorted(
            p
            for p in target.rglob("*")
            if p.suffix in SIGMA_SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(target).parts)
        )
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
    total = 0
    for path in paths:
        try:
            raw = bounded_bytes(path)
            total += len(raw)
            if total > MAX_TOTAL_BYTES:
                raise SigmaRefused(path, "", f"the files come to more than {MAX_TOTAL_BYTES // 1_000_000} MB")
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SigmaRefused(path, "", f"cannot be read: {exc}") from None
        except ValueError as exc:
            raise SigmaRefused(path, "", str(exc)) from None
        try:
            docs = list(yaml.load_all(text, Loader=SigmaYAMLLoader))  # aliases stay shared, not expanded
            for number, doc in enumerate(docs, 1):
                if doc is not None and not isinstance(doc, dict):
                    raise SigmaRefused(path, "", f"YAML document {number} is not a map of rule fields")
            collection = SigmaCollection.from_dicts(
                docs, collect_errors=True, resolve_references=False, policy=_POLICY
            )
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
    if len(merged.rules) > MAX_RULES:
        raise SigmaRefused(
            next(iter(files.values()), ""), "", f"{len(merged.rules)} rules; at most {MAX_RULES} at a time"
        )
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


@dataclass(frozen=True, slots=True)
class SigmaEntry:
    """One rule made from a Sigma rule: its settings entry, the rule as validated, where it came from."""

    entry: dict[str, Any]
    rule: Rule
    path: Path
    label: str


_BUILTIN: Final = {r.id: r for r in BUILTIN_RULES}


def builtin_taken(rule_id: str) -> str:
    """Why a Sigma rule may not take a built-in rule's id (it would replace the built-in, which would then keep
    its name but lose its explanation and fixtures)."""
    return f"its id {rule_id!r} is a built-in rule's: give the Sigma rule another name (its `name:`)"


def _validated(entry: dict[str, Any], lists: Iterable[str]) -> Rule:
    alone = load_rules([entry], BUILTIN_RULES, lists=lists)
    builtin = _BUILTIN.get(str(entry["id"]))
    if builtin is not None:  # only that built-in exactly as it is (what `rules export` writes) reads back
        same = alone.get(builtin.id)
        if alone.errors or same is None or same.model_dump(mode="json") != builtin.model_dump(mode="json"):
            raise Refusal("", builtin_taken(builtin.id))
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
        except RecursionError:  # a condition of hundreds of nested `not`s or brackets
            raise SigmaRefused(path, label, "its condition nests too deeply to be read") from None
    return entries
