"""The parsed query: a small tree of terms under NOT, AND and OR, and its canonical text.

    Node = Text      free text: a word (matches words starting with it) or a "quoted phrase"
         | Term      field:value (fields.py); `*` in an unquoted value is a wildcard
         | Not       -x  or  NOT x
         | And       x y  or  x AND y   (binds tighter than OR)
         | Or        x OR y

And/Or are kept flat (no And directly inside an And) so that `parse(to_text(q)) == q`. Spans point into the text
the node was parsed from and are left out of equality.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Final

KEYWORDS: Final = frozenset({"OR", "AND", "NOT"})
FIELD_PREFIX: Final = re.compile(r"[A-Za-z][A-Za-z0-9_]*:")
_BARE: Final = re.compile(r'[^\s()"]+')


@dataclass(frozen=True)
class Text:
    value: str
    phrase: bool = False
    span: tuple[int, int] = _field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Term:
    field: str  # a canonical field name (fields.FIELDS)
    value: str
    phrase: bool = False
    span: tuple[int, int] = _field(default=(0, 0), compare=False)

    @property
    def is_glob(self) -> bool:
        return not self.phrase and "*" in self.value


@dataclass(frozen=True)
class Not:
    child: Node


@dataclass(frozen=True)
class And:
    children: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Node, ...]


Node = Text | Term | Not | And | Or


def bare_word(value: str) -> bool:
    """Whether free text `value` reads back as the same single word without quotes."""
    return (
        bool(_BARE.fullmatch(value))
        and value not in KEYWORDS
        and not value.startswith("-")
        and not FIELD_PREFIX.match(value)
    )


def bare_value(value: str) -> bool:
    """Whether a field value reads back as itself without quotes."""
    return bool(_BARE.fullmatch(value))


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_text(node: Node) -> str:
    """The canonical query text of `node` (what `parse` turns back into an equal tree)."""
    if isinstance(node, Text):
        return quote(node.value) if node.phrase else node.value
    if isinstance(node, Term):
        return f"{node.field}:{quote(node.value) if node.phrase else node.value}"
    if isinstance(node, Not):
        inner = node.child
        return "-" + (f"({to_text(inner)})" if isinstance(inner, And | Or) else to_text(inner))
    if isinstance(node, And):
        return " ".join(f"({to_text(c)})" if isinstance(c, Or) else to_text(c) for c in node.children)
    return " OR ".join(to_text(c) for c in node.children)


def walk(node: Node) -> list[Node]:
    """`node` and every node under it, depth first."""
    out: list[Node] = [node]
    if isinstance(node, Not):
        out += walk(node.child)
    elif isinstance(node, And | Or):
        for c in node.children:
            out += walk(c)
    return out
