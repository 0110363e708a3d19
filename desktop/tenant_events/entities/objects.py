"""Naming an object on the command line or in a link: `user:ID`, `email:ADDRESS`, `org:ID`, `group:ID`,
`role:ID`, `connection:ID`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tenant_events.errors import UserFixableError

PREFIXES: Final = {
    "user": "user",
    "email": "email",
    "org": "organization",
    "organization": "organization",
    "group": "group",
    "role": "role",
    "connection": "connection",
    "con": "connection",
}
FORMS: Final = "user:ID, email:ADDRESS, org:ID, group:ID, role:ID or connection:ID"


@dataclass(frozen=True, slots=True)
class ObjectSpec:
    """What to look up: an entity kind (or "email") and the text after the colon."""

    kind: str  # user | email | organization | group | role | connection
    text: str

    def __str__(self) -> str:
        short = "org" if self.kind == "organization" else self.kind
        return f"{short}:{self.text}"


def parse_object(value: str) -> ObjectSpec:
    """`org:org_123` → ObjectSpec("organization", "org_123"); a bad value raises one clear line."""
    prefix, sep, text = value.partition(":")
    kind = PREFIXES.get(prefix.strip().lower()) if sep else None
    if kind is None or not text.strip():
        raise UserFixableError(f"{value!r} does not name an object", f"write {FORMS}")
    return ObjectSpec(kind, text.strip())
