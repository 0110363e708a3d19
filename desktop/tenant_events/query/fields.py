"""The fields a query can name (`user:`, `org:`, `type:` …) and where each one lives in a stored event.

A field is an `events` column, the event type (matched by name with `*` wildcards) or a set of JSON paths into
the stored `data:` text, each path only for the event types where it means that field: `data.object.name` is a
user's name on `user.*` events but an organization's on `organization.created`. Paths follow the payloads in
docs/event-stream.md "Payloads" and wire/payloads.py; the store turns them into SQL (store/query_sql.py).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Final

from tenant_events.wire.event_types import EVENT_TYPE_NAMES, FAMILIES


class Kind(Enum):
    TYPE = "type"  # the event type name, exact with `*` wildcards, checked against the 22 names
    FAMILY = "family"  # user / organization / group
    TEXT = "text"  # a column or JSON values, matched like the free text (a word starting with the value)
    ALERT = "alert"  # the events behind one alert of the tenant's rules, by its number


@dataclass(frozen=True)
class JsonPath:
    """`path` into the stored message; `types` (name globs) are the event types where it means the field."""

    path: str
    types: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Field:
    name: str
    help: str
    example: str
    kind: Kind = Kind.TEXT
    column: str | None = None  # an `events` column (TEXT fields without paths)
    paths: tuple[JsonPath, ...] = ()
    aliases: tuple[str, ...] = ()


_OBJ: Final = "$.event.data.object"
_USER: Final = ("user.*",)
_ORG_SELF: Final = ("organization.created", "organization.updated", "organization.deleted")
_GROUP_SELF: Final = ("group.created", "group.updated", "group.deleted")
_GROUP_PARTS: Final = ("group.member.*", "group.role.*", "organization.group.role.*")


def _paths(types: tuple[str, ...] | None, *paths: str) -> tuple[JsonPath, ...]:
    return tuple(JsonPath(f"{_OBJ}.{p}" if not p.startswith("$") else p, types) for p in paths)


FIELDS: Final[tuple[Field, ...]] = (
    Field("type", "the event type; * is a wildcard", "type:organization.*", Kind.TYPE),
    Field("family", "user, organization or group", "family:group", Kind.FAMILY),
    Field(
        "user",
        "a user's id, email, username or name",
        "user:ada",
        paths=_paths(_USER, "user_id", "email", "username", "name", "nickname")
        + _paths(("organization.member.*",), "user.user_id")
        + _paths(("group.member.*",), "member.id"),
        aliases=("users",),
    ),
    Field(
        "email",
        "a user's email address",
        "email:ada@example.com",
        paths=_paths(_USER, "email"),
        aliases=("mail",),
    ),
    Field(
        "org",
        "an organization's id, name or display name",
        "org:acme",
        paths=_paths(_ORG_SELF, "id", "name", "display_name")
        + _paths(("organization.*",), "organization.id", "organization.name", "organization.display_name")
        + _paths(_GROUP_SELF, "organization_id")
        + _paths(("group.member.*", "group.role.*"), "group.organization_id"),
        aliases=("organization", "organisation"),
    ),
    Field(
        "group",
        "a group's id or name",
        "group:admins",
        paths=_paths(_GROUP_SELF, "id", "name") + _paths(_GROUP_PARTS, "group.id", "group.name"),
    ),
    Field("role", "a role's id or name", "role:admin", paths=_paths(("*.role.*",), "role.id", "role.name")),
    Field(
        "connection",
        "a connection's id or name",
        "connection:google-oauth2",
        paths=_paths(("organization.connection.*",), "connection.id", "connection.name")
        + _paths(_GROUP_SELF, "connection_id")
        + _paths(_GROUP_PARTS, "group.connection_id")
        + _paths(None, "$.event.data.context.connection.id", "$.event.data.context.connection.name"),
    ),
    Field(
        "ip",
        "the IP address of the request",
        "ip:203.0.113.7",
        paths=_paths(None, "$.event.data.context.request.ip"),
    ),
    Field(
        "client",
        "the id or name of the application that made the request",
        "client:dashboard",
        paths=_paths(None, "$.event.data.context.client.id", "$.event.data.context.client.name"),
        aliases=("app",),
    ),
    Field("purpose", "the event's purpose", "purpose:test", column="purpose"),
    Field("id", "the event id", "id:evt_1a2b3c", column="event_id", aliases=("event", "event_id")),
    Field("tenant", "the tenant the event belongs to", "tenant:acme", column="tenant"),
    Field("alert", "the events behind an alert (its number, per tenant)", "alert:12", Kind.ALERT),
    Field("source", "the event source", "source:urn:auth0:acme", column="source"),
)

_BY_NAME: Final = {n: f for f in FIELDS for n in (f.name, *f.aliases)}
TYPE_NAMES: Final = tuple(sorted(EVENT_TYPE_NAMES))


def field_named(name: str) -> Field | None:
    return _BY_NAME.get(name.lower())


def field_names() -> str:
    """ "type, family, user, …": every field a query can name, for the "unknown field" message."""
    return ", ".join(f.name for f in FIELDS)


def suggest_field(name: str) -> str | None:
    """The field the user probably meant by `name` (a typo), or None."""
    close = difflib.get_close_matches(name.lower(), list(_BY_NAME), n=1, cutoff=0.6)
    return _BY_NAME[close[0]].name if close else None


def glob_matches(pattern: str, text: str) -> bool:
    """Whether `text` is `pattern`, where `*` is any run of characters and everything else is literal
    (case-insensitive). Each piece between stars is found leftmost, in turn — enough for `*` alone, and at worst
    len(pattern)·len(text) steps: a run of stars never backtracks (a regex `.*.*.*…#` takes years)."""
    pieces = pattern.lower().split("*")
    low = text.lower()
    if len(pieces) == 1:
        return low == pieces[0]
    first, *middle, last = pieces
    end = len(low) - len(last)
    if end < len(first) or not low.startswith(first) or not low.endswith(last):
        return False
    at = len(first)
    for piece in middle:
        found = low.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@lru_cache(maxsize=256)
def types_matching(pattern: str) -> tuple[str, ...]:
    """The event type names `pattern` (with `*` wildcards) matches, sorted."""
    return tuple(t for t in TYPE_NAMES if glob_matches(pattern, t))


def suggest_type(value: str) -> str | None:
    """A type name (or `family.*`) close to `value`, for "did you mean"."""
    low = value.lower().rstrip(".*")
    if low in FAMILIES:
        return f"{low}.*"
    candidates = [*TYPE_NAMES, *(f"{f}.*" for f in FAMILIES)]
    close = difflib.get_close_matches(value.lower(), candidates, n=1, cutoff=0.6)
    return close[0] if close else None


def families_matching(pattern: str) -> tuple[str, ...]:
    return tuple(f for f in FAMILIES if glob_matches(pattern, f))


def suggest_family(value: str) -> str | None:
    close = difflib.get_close_matches(value.lower(), list(FAMILIES), n=1, cutoff=0.5)
    return close[0] if close else None
