"""Typed errors of the query line: what is wrong, where (a character span of the query) and one line why.

    QueryError                  anything wrong with a query; `start`/`end` index the query text
     ├── QuerySyntaxError       an unclosed quote or parenthesis, a dangling OR/AND/NOT or '-'
     ├── UnknownFieldError      `usr:alice`: names the closest field when there is one
     ├── UnknownValueError      a value the field cannot take (`type:user.delted`, `family:users`)
     ├── EmptyValueError        `user:` with nothing after the colon
     └── QueryTooLargeError     over a stated limit: characters, terms or nesting (parser.LIMITS)

The reason is written for the person typing: the window shows it next to the underlined span and the CLI
prints it on one line, so it names the value and says what to do instead.
"""

from __future__ import annotations

from tenant_events.errors import UserFixableError


class QueryError(UserFixableError):
    """A query that cannot run; `text[start:end]` is the part to underline (end > start unless text is empty)."""

    def __init__(self, reason: str, start: int, end: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r}, {self.start}, {self.end})"


class QuerySyntaxError(QueryError):
    """Quotes, parentheses or operators that do not pair up."""


class UnknownFieldError(QueryError):
    """`name:` where no field has that name."""


class UnknownValueError(QueryError):
    """A value outside the field's closed set (event types, families)."""


class EmptyValueError(QueryError):
    """A field with nothing after its colon."""


class QueryTooLargeError(QueryError):
    """More characters, terms or nesting than the store can run in bounded time and stack."""
