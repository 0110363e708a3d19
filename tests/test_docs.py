"""The docs stay true to the tree: every path they name exists, every section a comment points to is there, and
nothing in the repository points at a document outside it (a contributor who clones it cannot follow that)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "desktop" / "tenant_events"
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
SOURCES = [
    p
    for folder in ("desktop", "tests", "bench", "packaging", "resources")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in {".py", ".sh", ".toml", ".conf", ".mjs", ".md", ".spec"}
    and not {"__pycache__", "node_modules"} & set(p.parts)
    and ".egg-info" not in str(p)
]
# Made by a build or a test run, or on the user's machine: named by the docs, never in the tree.
MADE_ELSEWHERE = ("artifacts/", "dist/", ".local/")
PATH = re.compile(r"`((?:[\w.-]+/)*[\w-]+(?:\.(?:py|md|toml|sh|conf|mjs|lock)|/))`")
POINTER = re.compile(r"(docs/[\w-]+\.md|CONTRIBUTING\.md|README\.md)((?:,? (?:and )?\"[^\"\n]+\")+)")
OUTSIDE = re.compile(
    r"spec[- ]?00\d|\bissue #?\d+|STYLE\.md|(?<![\w/-])(?:desktop|login)\.md|\.\./shared|shared/(?:spec|reference)"
    r"|\"Must show\"",
    re.IGNORECASE,
)


def _headings(doc: Path) -> set[str]:
    return {h.strip() for h in re.findall(r"^#+ (.+)$", doc.read_text(), re.MULTILINE)}


def _found(name: str) -> bool:
    """A path as the docs write it: from the repository's root, the package, ui/ (the README's tour of it) or
    tests/; a bare file name anywhere in the tree."""
    if any((base / name).exists() for base in (ROOT, PACKAGE, PACKAGE / "ui", ROOT / "tests")):
        return True
    return "/" not in name.rstrip("/") and any(p.name == name for p in SOURCES)


def test_every_path_the_docs_name_exists():
    missing = [
        f"{doc.name}: {name}"
        for doc in DOCS
        for name in PATH.findall(doc.read_text())
        if not name.startswith(MADE_ELSEWHERE) and not _found(name)
    ]
    assert not missing, "\n".join(missing)


def test_every_section_a_comment_points_to_exists():
    docs = {str(doc.relative_to(ROOT)): _headings(doc) for doc in DOCS}
    broken = [
        f"{source.relative_to(ROOT)}: {doc} has no section {section!r}"
        for source in [*SOURCES, *DOCS]
        for doc, sections in POINTER.findall(source.read_text(errors="replace"))
        for section in re.findall(r"\"([^\"\n]+)\"", sections)
        if section not in docs.get(doc, set())
    ]
    assert not broken, "\n".join(broken)


def test_nothing_points_at_a_document_outside_the_repository():
    here = Path(__file__).resolve()
    pointers = [
        f"{source.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for source in [*SOURCES, *DOCS]
        if source != here
        for text in [source.read_text(errors="replace")]
        for m in OUTSIDE.finditer(text)
    ]
    assert not pointers, "\n".join(pointers)
