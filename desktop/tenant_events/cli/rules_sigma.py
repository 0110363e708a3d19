"""`tenant-events rules import FILE.yml|DIR` and `rules export --sigma DIR`: alert rules in and out as Sigma.

Import reads Sigma detection and correlation rules (logsource product auth0, service events; fields are the
event's dotted JSON paths such as type or data.object.role.name) and adds them to the settings file as rules
of their own, marked Sigma. One rule that cannot be expressed refuses the whole import with one line naming
the file, the rule and the field or modifier (exit 3); the settings file is then untouched.

Export writes every rule in effect (built-in and your own) as one Sigma file each, which import reads back
to the same rules.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tenant_events.alerts.from_settings import rule_set
from tenant_events.alerts.sigma_rules import NotExpressible, merge_imported, read_sigma, rule_yaml
from tenant_events.errors import ConfigError
from tenant_events.paths import AppPaths
from tenant_events.server_text import shown
from tenant_events.settings import load_settings
from tenant_events.settings.shared_file import edited_settings

_EXIT_BAD = ConfigError.exit_code


def register(actions: Any) -> None:
    """Add `import` and `export` under `tenant-events rules`."""
    imp = actions.add_parser(
        "import",
        help="add Sigma rules (a .yml file or a folder of them) as alert rules",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 imported · 2 usage · 3 a rule cannot be expressed (nothing imported)",
    )
    imp.add_argument(
        "source", metavar="FILE.yml|DIR", help="a Sigma file, or a folder of them (searched deeply)"
    )
    imp.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    imp.set_defaults(run=run_import)
    exp = actions.add_parser(
        "export",
        help="write the alert rules as Sigma files",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 written · 2 usage · 3 a rule cannot be written as Sigma (the others are)",
    )
    exp.add_argument(
        "--sigma", metavar="DIR", required=True, help="the folder to write <rule id>.yml files into"
    )
    exp.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    exp.set_defaults(run=run_export)


def run_import(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    with edited_settings(paths) as settings:
        found = read_sigma(Path(args.source), lists=settings.alerts.lists)
        imported = merge_imported(settings.alerts, found)
        settings.alerts = imported.alerts
    for rule in imported.rules:
        again = " (replaced)" if rule.id in imported.replaced else ""
        print(
            shown(f"imported  {rule.severity:<8}  {rule.id:<24}  {rule.name}{again}", None)
        )  # a file's words
    count = len(imported.rules)
    print(
        f"tenant-events: {count} Sigma rule{'s' if count != 1 else ''} imported from {args.source}",
        file=sys.stderr,
    )
    return 0


def _write_new(path: Path, text: str) -> None:
    """`text` into a temp file of a name nobody can guess, made anew (O_EXCL: a planted symlink is never
    followed), then renamed over `path` (a symlink there is replaced, its target untouched)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run_export(args: argparse.Namespace) -> int:
    paths = AppPaths.resolve(args.data_dir)
    ruleset = rule_set(load_settings(paths).alerts)
    target = Path(args.sigma)
    if target.exists() and not target.is_dir():
        raise ConfigError("--sigma", f"{target} is not a folder", "give a folder to write the rules into")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            "--sigma",
            f"{target} cannot be made a folder ({exc.strerror or exc})",
            "give a folder you can write in",
        ) from None
    failed = 0
    written = 0
    for rule in ruleset.rules:
        try:
            text = rule_yaml(rule)
        except NotExpressible as exc:
            print(
                shown(f"tenant-events: alert rule {rule.id!r}: not written as Sigma: {exc}", None),
                file=sys.stderr,
            )
            failed += 1
            continue
        path = target / f"{rule.id}.yml"
        _write_new(path, text)
        print(shown(path, None))
        written += 1
    rules = "1 rule" if written == 1 else f"{written} rules"
    print(f"tenant-events: {rules} written as Sigma to {target}", file=sys.stderr)
    return _EXIT_BAD if failed else 0
