"""requirements.lock pins every dependency pyproject.toml names, each with the hashes `./run` installs against.

A dependency added to pyproject.toml without `./run lock` fails here, before `./run` refuses the install.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """The normalised project name of a requirement string (`PySide6-Essentials>=6.11; ...` -> pyside6-essentials)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(1)).lower()


def _locked() -> dict[str, list[str]]:
    """Each pinned name (lower case) -> its hashes, from the lock's `name==version [; marker] \\ --hash=...` entries."""
    pins: dict[str, list[str]] = {}
    current: str | None = None
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if re.match(r"^[a-z0-9]", line):
            assert "==" in line, f"not an exact pin: {line}"
            current = _name(line)
            pins.setdefault(current, [])
        elif line.strip().startswith("--hash=") and current is not None:
            pins[current].append(line.strip().removeprefix("--hash=").rstrip(" \\"))
    return pins


def test_every_dependency_is_pinned_with_hashes():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_name(r) for r in extra}
    pins = _locked()
    missing = sorted(wanted - set(pins))
    assert not missing, f"not in requirements.lock (run ./run lock): {missing}"
    unhashed = sorted(name for name, hashes in pins.items() if not hashes)
    assert not unhashed, f"pinned without hashes: {unhashed}"
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for hashes in pins.values() for h in hashes)


def test_run_installs_the_lock_with_hashes_required():
    script = (ROOT / "run").read_text(encoding="utf-8")
    assert "pip install -q --require-hashes -r requirements.lock" in script
    assert "pip install -q --no-deps -e" in script
    # the faster path: uv installed from its own pins with hashes, then the lock with hashes required
    assert 'pip install -q --require-hashes -r "$pinned"' in script
    assert "--require-hashes -r requirements.lock && " in script
    assert "-c requirements.lock" not in script  # constraints alone would let unhashed files in
