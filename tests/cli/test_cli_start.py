"""The command line imports only the code of the verb that runs: `--version` and `--help` load none of it."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from tenant_events.cli import main as cli_main

# What a run imported of the package, as a child process sees it (a fresh interpreter, nothing preloaded).
_IMPORTED = """
import json, sys
from tenant_events.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
print(json.dumps(sorted(m for m in sys.modules if m.startswith("tenant_events") or m in ("httpx", "sqlite3"))),
      file=sys.stderr)
"""


def _imported(*argv: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *argv], capture_output=True, text=True, timeout=60
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("-h",)])
def test_version_and_help_import_no_subcommand(argv: tuple[str, ...]):
    imported = _imported(*argv)
    assert not {m for m in imported if m.endswith("_cmd")}, imported
    assert not imported & {"tenant_events.tenant", "tenant_events.store", "tenant_events.alerts", "httpx"}


def test_a_verb_imports_its_own_module_only():
    imported = _imported("export", "--help")
    assert {m for m in imported if m.endswith("_cmd")} == {"tenant_events.cli.export_cmd"}


def test_help_lists_every_verb_with_the_line_its_module_gives():
    registered: dict[str, str] = {}
    sub = argparse.ArgumentParser().add_subparsers()
    for name in cli_main.COMMANDS:
        importlib.import_module(f"tenant_events.cli.{name}").register(sub)
    for action in sub._choices_actions:
        registered[action.dest] = str(action.help)
    assert registered == {verb: line for verb, (_, line) in cli_main.VERBS.items()}
    for verb, (module, _) in cli_main.VERBS.items():
        lone = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"tenant_events.cli.{module}").register(lone)
        assert verb in lone.choices, f"{module} does not register {verb}"


def test_top_level_help_shows_every_verb(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as done:
        cli_main.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for verb in cli_main.VERBS:
        assert f"\n    {verb}" in out


def test_an_unknown_verb_names_the_choices(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as done:
        cli_main.main(["exprot"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'exprot'" in err and "'export'" in err and "'relay'" in err


def test_the_http_library_comes_without_its_command_line_tool():
    """httpx imports its own command-line tool (click, rich, pygments) whenever they are installed, as they are
    here: the stream command started about 0.1 s slower for it."""
    script = (
        "import sys, tenant_events, httpx\n"
        "assert httpx.Client and httpx.AsyncClient\n"
        "print(sorted(m for m in ('click', 'rich', 'pygments') if m in sys.modules))\n"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"
    installed = subprocess.run(  # (the check means something only where they are installed)
        [sys.executable, "-c", "import click, rich, pygments"], capture_output=True, timeout=60
    )
    assert installed.returncode == 0
