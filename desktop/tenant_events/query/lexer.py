"""Splits query text into tokens with their character spans (what the errors underline).

Whitespace separates tokens; `(` and `)` stand alone; `"…"` is a phrase (`\\"` and `\\\\` inside it); `-` right
before a term negates it; `name:value` is a field term when `name` looks like a field name (a letter first), so
`12:30` stays plain text; `OR`, `AND` and `NOT` in capitals are operators.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tenant_events.query.errors import QuerySyntaxError
from tenant_events.query.syntax import FIELD_PREFIX, KEYWORDS


class Tok(Enum):
    WORD = "word"
    PHRASE = "phrase"
    FIELD = "field"
    LPAREN = "("
    RPAREN = ")"
    NEG = "-"
    OR = "OR"
    AND = "AND"
    NOT = "NOT"
    END = "end"


@dataclass(frozen=True)
class Token:
    kind: Tok
    text: str  # the word, the phrase without quotes, or a field's value
    start: int
    end: int
    name: str = ""  # FIELD: the field name as typed
    quoted: bool = False  # FIELD: the value was a "phrase"
    value_start: int = 0  # FIELD: where the value begins


_STOP = frozenset('()"')


def _bare_end(text: str, i: int) -> int:
    while i < len(text) and not text[i].isspace() and text[i] not in _STOP:
        i += 1
    return i


def _phrase(text: str, start: int) -> tuple[str, int]:
    """The phrase opening at `start` (a quote) and the index after its closing quote."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
            out.append(text[i + 1])
            i += 2
        elif c == '"':
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise QuerySyntaxError('this phrase has no closing quote — add " at its end', start, len(text))


def tokens(text: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "()":
            out.append(Token(Tok.LPAREN if c == "(" else Tok.RPAREN, c, i, i + 1))
            i += 1
        elif c == '"':
            value, end = _phrase(text, i)
            out.append(Token(Tok.PHRASE, value, i, end))
            i = end
        elif c == "-":
            if i + 1 >= n or text[i + 1].isspace() or text[i + 1] == ")":
                raise QuerySyntaxError(
                    "put '-' right before what to leave out, e.g. -type:user.updated", i, i + 1
                )
            out.append(Token(Tok.NEG, c, i, i + 1))
            i += 1
        elif m := FIELD_PREFIX.match(text, i):
            j = m.end()
            if j < n and text[j] == '"':
                value, end = _phrase(text, j)
                out.append(Token(Tok.FIELD, value, i, end, text[i : j - 1], True, j))
            else:
                end = _bare_end(text, j)
                out.append(Token(Tok.FIELD, text[j:end], i, end, text[i : j - 1], False, j))
            i = end
        else:
            end = _bare_end(text, i)
            word = text[i:end]
            out.append(Token(Tok(word) if word in KEYWORDS else Tok.WORD, word, i, end))
            i = end
    out.append(Token(Tok.END, "", n, n))
    return out
