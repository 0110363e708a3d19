"""The query line's language, Qt-free and SQL-free: parse text into a tree, or a typed error with its span.

The store compiles the tree to SQL (store/query_sql.py); the window and `export --query` share this parser.
"""

from tenant_events.query.errors import (
    EmptyValueError,
    QueryError,
    QuerySyntaxError,
    QueryTooLargeError,
    UnknownFieldError,
    UnknownValueError,
)
from tenant_events.query.fields import FIELDS, Field, JsonPath, Kind
from tenant_events.query.parser import MAX_DEPTH, MAX_LENGTH, MAX_TERMS, parse
from tenant_events.query.syntax import And, Node, Not, Or, Term, Text, to_text

__all__ = [
    "FIELDS",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_TERMS",
    "And",
    "EmptyValueError",
    "Field",
    "JsonPath",
    "Kind",
    "Node",
    "Not",
    "Or",
    "QueryError",
    "QuerySyntaxError",
    "QueryTooLargeError",
    "Term",
    "Text",
    "UnknownFieldError",
    "UnknownValueError",
    "parse",
    "to_text",
]
