"""Parses the query line into a tree (syntax.py), or raises a typed error naming the span to underline.

    query   := or END
    or      := and ("OR" and)*
    and     := unary (["AND"] unary)*          adjacent terms are ANDed
    unary   := ("-" | "NOT") unary | primary
    primary := "(" or ")" | word | "phrase" | field ":" (value | "phrase")

Field names and the values of closed fields (event types, families) are checked here, so the store only ever
sees queries it can run. The first problem found is reported; the window underlines it.

A query is bounded (MAX_LENGTH characters, MAX_TERMS terms, MAX_DEPTH levels of parentheses and negations): past
those, SQLite refuses the statement ("Expression tree is too large", "parser stack overflow") and this recursive
parser would run out of stack, so the limit is stated up front with the span that goes over it.
"""

from __future__ import annotations

from functools import lru_cache

from tenant_events.query.errors import (
    EmptyValueError,
    QuerySyntaxError,
    QueryTooLargeError,
    UnknownFieldError,
    UnknownValueError,
)
from tenant_events.query.fields import (
    Kind,
    families_matching,
    field_named,
    field_names,
    suggest_family,
    suggest_field,
    suggest_type,
    types_matching,
)
from tenant_events.query.lexer import Tok, Token, tokens
from tenant_events.query.syntax import And, Node, Not, Or, Term, Text

_CLOSERS = (Tok.END, Tok.RPAREN, Tok.OR, Tok.AND)
MAX_LENGTH = 2000  # characters
MAX_TERMS = 100  # words, phrases and field terms
MAX_DEPTH = 20  # nested parentheses, NOT and '-'


@lru_cache(maxsize=128)
def parse(text: str) -> Node | None:
    """The tree of `text`; None when it has no terms at all. Raises a QueryError subclass."""
    if len(text) > MAX_LENGTH:
        raise QueryTooLargeError(
            f"a query can be at most {MAX_LENGTH} characters long; this one has {len(text)} — shorten it",
            MAX_LENGTH,
            len(text),
        )
    if (nul := text.find("\x00")) >= 0:  # SQLite's GLOB would end the pattern there, the archive's checks not
        raise QuerySyntaxError("a NUL character cannot be searched for — remove it", nul, nul + 1)
    return _Parser(text).query()


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.depth = 0
        self.terms = 0
        self.end = len(text)

    def peek(self) -> Token:
        return self.toks[self.i]

    def take(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def query(self) -> Node | None:
        if self.peek().kind is Tok.END:
            return None
        node = self.or_()
        extra = self.peek()
        if extra.kind is Tok.RPAREN:
            raise QuerySyntaxError("this ')' has no '(' before it — remove it", extra.start, extra.end)
        return node

    def or_(self) -> Node:
        items = [self.and_()]
        while self.peek().kind is Tok.OR:
            op = self.take()
            self._operand_after(op)
            items.append(self.and_())
        return _flat(Or, items)

    def and_(self) -> Node:
        first = self.peek()
        if first.kind in (Tok.OR, Tok.AND):
            raise QuerySyntaxError(
                f"{first.text} needs something to search for on each side", first.start, first.end
            )
        items = [self.unary()]
        while (tok := self.peek()).kind not in (Tok.END, Tok.RPAREN, Tok.OR):
            if tok.kind is Tok.AND:
                self.take()
                self._operand_after(tok)
            items.append(self.unary())
        return _flat(And, items)

    def _deeper(self, tok: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryTooLargeError(
                f"a query can nest parentheses and negations at most {MAX_DEPTH} deep — simplify it",
                tok.start,
                self.end,
            )

    def unary(self) -> Node:
        tok = self.peek()
        if tok.kind in (Tok.NEG, Tok.NOT):
            self._deeper(tok)
            self.take()
            if self.peek().kind in _CLOSERS:
                raise QuerySyntaxError(
                    f"'{tok.text}' needs something right after it to leave out, e.g. -type:user.updated",
                    tok.start,
                    tok.end,
                )
            node: Node = Not(self.unary())
            self.depth -= 1
            return node
        return self.primary()

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind is Tok.LPAREN:
            self._deeper(tok)
            if self.peek().kind is Tok.END:
                raise QuerySyntaxError("this '(' is never closed — add ')'", tok.start, tok.end)
            if self.peek().kind is Tok.RPAREN:
                close = self.peek()
                raise QuerySyntaxError(
                    "these parentheses are empty — put terms inside or remove them", tok.start, close.end
                )
            inner = self.or_()
            if self.peek().kind is not Tok.RPAREN:
                raise QuerySyntaxError("this '(' is never closed — add ')'", tok.start, tok.end)
            self.take()
            self.depth -= 1
            return inner
        if tok.kind is Tok.RPAREN:
            raise QuerySyntaxError("this ')' has no '(' before it — remove it", tok.start, tok.end)
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise QueryTooLargeError(
                f"a query can have at most {MAX_TERMS} terms — narrow it down, or use "
                "the time range and type filters",
                tok.start,
                self.end,
            )
        if tok.kind is Tok.FIELD:
            return _term(tok)
        if not any(ch.isalnum() for ch in tok.text):
            what = "this phrase" if tok.kind is Tok.PHRASE else f"'{tok.text}'"
            raise QuerySyntaxError(f"{what} has no letters or digits to search for", tok.start, tok.end)
        return Text(tok.text, tok.kind is Tok.PHRASE, (tok.start, tok.end))

    def _operand_after(self, op: Token) -> None:
        if self.peek().kind in _CLOSERS:
            raise QuerySyntaxError(f"{op.text} needs something to search for on each side", op.start, op.end)


def _flat(kind: type[And] | type[Or], items: list[Node]) -> Node:
    if len(items) == 1:
        return items[0]
    children: list[Node] = []
    for item in items:
        children.extend(item.children if isinstance(item, kind) else (item,))
    return kind(tuple(children))


def _term(tok: Token) -> Term:
    field = field_named(tok.name)
    name_span = (tok.start, tok.value_start - 1)
    if field is None:
        guess = suggest_field(tok.name)
        hint = f"did you mean {guess}?" if guess else "to search for text with a colon, put it in quotes"
        raise UnknownFieldError(f"unknown field '{tok.name}' — {hint} (fields: {field_names()})", *name_span)
    value = tok.text
    if not value:
        raise EmptyValueError(
            f"'{tok.name}:' needs a value right after the colon, e.g. {field.example}", tok.start, tok.end
        )
    value_span = (tok.value_start, tok.end)
    if field.kind is Kind.TYPE and not types_matching(value):
        guess = suggest_type(value)
        hint = f"did you mean {guess}?" if guess else "the Types menu lists them"
        raise UnknownValueError(f"no event type '{value}' — {hint}", *value_span)
    if field.kind is Kind.FAMILY and not families_matching(value):
        guess = suggest_family(value)
        hint = f"did you mean {guess}?" if guess else "use user, organization or group"
        raise UnknownValueError(f"no family '{value}' — {hint}", *value_span)
    if field.kind is Kind.ALERT and not (value.isascii() and value.isdigit() and int(value) > 0):
        raise UnknownValueError(
            f"'{value}' is not an alert number — use the alert_id of `tenant-events alerts --jsonl`, "
            f"e.g. {field.example}",
            *value_span,
        )
    return Term(field.name, value, tok.quoted, (tok.start, tok.end))
