"""Which dotted fields of `data` each event type carries, so a rule that groups or counts by a field no event
of its types carries is refused when it is loaded, not silently quiet forever.

Paths are relative to the event's `data` (`object.role.name`, `context.client.id`); a path names a field or
anything below one (`object.identities.connection`). Field names follow the real payloads (docs/event-stream.md "Payloads").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

CONTEXT: Final = ("context.client", "context.connection", "context.request", "context.tenant")
_USER: Final = (
    "user_id",
    "email",
    "email_verified",
    "username",
    "name",
    "nickname",
    "given_name",
    "family_name",
    "phone_number",
    "phone_verified",
    "blocked",
    "identities",
    "picture",
    "app_metadata",
    "user_metadata",
    "created_at",
    "updated_at",
    "deleted_at",
    "last_login",
    "logins_count",
    "multifactor",
    "last_ip",
)
_ORG: Final = ("id", "name", "display_name", "metadata", "branding")
_GROUP: Final = (
    "id",
    "name",
    "type",
    "description",
    "created_at",
    "updated_at",
    "external_id",
    "connection_id",
    "organization_id",
)
_NESTED: Final[dict[str, tuple[str, ...]]] = {
    "group.member.": ("group", "member"),
    "group.role.": ("group", "role"),
    "organization.member.role.": ("organization", "user", "role"),
    "organization.member.": ("organization", "user"),
    "organization.group.role.": ("organization", "group", "role"),
    "organization.connection.": ("organization", "connection"),
}


def object_fields(event_type: str) -> tuple[str, ...]:
    """The top-level keys of `data.object` for `event_type`."""
    for prefix, keys in _NESTED.items():
        if event_type.startswith(prefix):
            return keys
    if event_type.startswith("user."):
        return _USER
    if event_type.startswith("organization."):
        return _ORG
    return _GROUP


def carried_by(path: str, event_type: str) -> bool:
    """Whether events of `event_type` carry `path` (or a field above or below it)."""
    if path == "context" or path.startswith(tuple(p + "." for p in ("context",))):
        return any(path == c or path.startswith(c + ".") or c.startswith(path + ".") for c in CONTEXT)
    head, _, rest = path.partition(".")
    if head in ("object", "previous_object"):
        if not rest:
            return True
        key = rest.split(".", 1)[0]
        return key in object_fields(event_type)
    return False


def check_carried(path: str, event_types: Iterable[str]) -> None:
    """Raise ValueError when no event of `event_types` carries `path`."""
    types = sorted(event_types)
    if not any(carried_by(path, t) for t in types):
        shown = ", ".join(types[:3]) + (", …" if len(types) > 3 else "")
        raise ValueError(f"no event of the rule's types ({shown}) carries the field {path!r}")
