# /// script
# requires-python = ">=3.11"
# dependencies = ["pyyaml>=6", "packaging>=24"]
# ///
"""Refresh the offline advisory snapshot that tests/proving/test_dependency_audit.py checks requirements.lock against.

The online audit (pip-audit) needs PyPI's JSON API or OSV, which CI here cannot reach, so the suite also checks
the lock against a dated copy of the PyPA advisory database (OSV records, CC-BY 4.0). This script reads a git
clone of that database, keeps the records that name a package pinned in requirements.lock (plus the canary's),
trims each to the fields the check reads and writes tests/proving/advisories/pypi-osv.json with the source
commit and date. Run it when the lock gains a package (the test fails until it is run) and whenever the
snapshot is to be brought up to date:

    git clone --depth 1 https://github.com/pypa/advisory-database /tmp/advisory-database
    .venv/bin/uv run packaging/refresh_advisories.py /tmp/advisory-database --source pypa/advisory-database
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "proving" / "advisories"
CANARY_PACKAGES = ["requests"]  # the test's known-vulnerable canary pin must be covered by the snapshot
KEPT = ("id", "aliases", "summary", "published", "modified", "withdrawn")
# BaseLoader keeps every scalar a string: an unquoted `fixed: 1.10` must not become the float 1.1.
LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


def locked_names(lock: Path) -> set[str]:
    """Every package pinned in the lock, on any platform (the Windows and macOS pins ship too)."""
    names = set()
    for line in lock.read_text().splitlines():
        if line.strip() and not line[0].isspace() and not line.startswith(("#", "-")):
            names.add(canonicalize_name(Requirement(line.removesuffix("\\").strip()).name))  # hashes follow
    return names


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def read_records(repo: Path) -> list[dict]:
    """All OSV records under vulns/ at the clone's HEAD (read through git, so a bare mirror works too)."""
    paths = [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD", "vulns/").splitlines()
        if p.endswith(".yaml")
    ]
    batch = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"], input="".join(f"HEAD:{p}\n" for p in paths).encode(),
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    records, pos = [], 0
    for path in paths:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        body = batch[header_end + 1 : header_end + 1 + size]
        pos = header_end + 2 + size
        record = yaml.load(body, Loader=LOADER)  # noqa: S506 -- BaseLoader builds only str, list and dict
        if not isinstance(record, dict) or "id" not in record:
            sys.exit(f"{path}: not an OSV record")
        records.append(record)
    return records


def trim(record: dict, wanted: set[str]) -> dict | None:
    """The record with only its PyPI entries for wanted packages, or None if it names none of them."""
    affected = [
        {
            "package": entry["package"],
            "ranges": [
                r for r in entry.get("ranges", []) if r.get("type") != "GIT"
            ],  # commits: no use for pins
            "versions": entry.get("versions", []),
        }
        for entry in record.get("affected", [])
        if entry.get("package", {}).get("ecosystem") == "PyPI"
        and canonicalize_name(entry["package"].get("name", "")) in wanted
    ]
    if not affected:
        return None
    kept = {k: record[k] for k in KEPT if k in record}
    if "summary" not in kept and record.get("details"):
        kept["summary"] = " ".join(record["details"].split())[:200]
    return {**kept, "affected": affected}


def dump(snapshot: dict) -> str:
    """JSON with one advisory a line, so a refresh's diff shows which advisories came, went or changed."""
    head = json.dumps({k: v for k, v in snapshot.items() if k != "advisories"}, indent=1, sort_keys=True)
    lines = ",\n".join(
        "  " + json.dumps(r, sort_keys=True, ensure_ascii=False) for r in snapshot["advisories"]
    )
    return head[:-2] + ',\n "advisories": [\n' + lines + "\n ]\n}\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, help="a git clone of the PyPA advisory database")
    parser.add_argument(
        "--source", required=True, help="which repository the clone is of (owner/name), recorded"
    )
    parser.add_argument("--lock", type=Path, default=ROOT / "requirements.lock")
    args = parser.parse_args()

    wanted = locked_names(args.lock) | {canonicalize_name(n) for n in CANARY_PACKAGES}
    selected = [t for r in read_records(args.clone) if (t := trim(r, wanted)) is not None]
    selected.sort(key=lambda r: r["id"])
    commit = git(args.clone, "rev-parse", "HEAD").strip()
    snapshot = {
        "source": {
            "repository": args.source,
            "commit": commit,
            "commit_date": git(args.clone, "log", "-1", "--format=%cI", "HEAD").strip(),
            "licence": "CC-BY-4.0 (see LICENSE beside this file)",
            "changes": "only records naming a package below; fields kept: "
            + ", ".join((*KEPT, "affected[package, ranges, versions]"))
            + "; GIT ranges dropped; summary falls back to the first 200 characters of details; YAML to JSON",
        },
        "packages": sorted(wanted),
        "advisories": selected,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pypi-osv.json").write_text(dump(snapshot))
    (OUT / "LICENSE").write_text(git(args.clone, "show", "HEAD:LICENSE"))
    print(f"{len(selected)} advisories for {len(wanted)} packages from {args.source}@{commit[:12]} → {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
