"""An entity's known state in words: "member of organization Stark since … with role admin", "deleted at …".

Qt-free lines for the CLI's `timeline` and the desktop's timeline pane; the links come from the directory
(store/entity_reader.py), seen from the entity itself.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from tenant_events.store.entity_records import Entity, EntityState, Link, Relation

# The link from each end's side: {kind of the entity looked at: phrase over the other ends (by kind)}.
_PHRASES: Final[dict[Relation, dict[str, str]]] = {
    Relation.ORG_MEMBER: {"user": "member of organization {organization}", "organization": "member {user}"},
    Relation.ORG_MEMBER_ROLE: {
        "user": "role {role} in organization {organization}",
        "organization": "member {user} has role {role}",
        "role": "held by {user} in organization {organization}",
    },
    Relation.ORG_CONNECTION: {
        "organization": "connection {connection}",
        "connection": "enabled for organization {organization}",
    },
    Relation.ORG_GROUP_ROLE: {
        "organization": "group {group} has role {role}",
        "group": "role {role} in organization {organization}",
        "role": "given to group {group} in organization {organization}",
    },
    Relation.GROUP_MEMBER: {"user": "in group {group}", "group": "member {user}"},
    Relation.GROUP_ROLE: {"group": "role {role}", "role": "given to group {group}"},
    Relation.GROUP_CONNECTION_MEMBER: {
        "group": "member connection {connection}",
        "connection": "in group {group}",
    },
}
MAX_LINES: Final = 50  # per part; the rest is counted


def when(ms: int | None) -> str:
    """Unix ms as `2026-11-01 12:00:05 UTC`."""
    if ms is None:
        return "?"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def title(entity: Entity) -> str:
    """`user grace@example.com (auth0|3de8…)`; the id alone when that is all that is known."""
    name = entity.label
    return f"{entity.kind} {name}" if name == entity.id else f"{entity.kind} {name} ({entity.id})"


def phrase(link: Link, entity: Entity) -> str:
    """The link in words from `entity`'s side."""
    others = {e.kind: e.label for e in link.other(entity.kind, entity.id)}
    template = _PHRASES[link.relation].get(entity.kind, link.relation.value.replace("_", " "))
    try:
        return template.format(**others)
    except KeyError:  # a relation seen from an end it does not use
        return f"{link.relation.value.replace('_', ' ')} with {', '.join(others.values())}"


def state_lines(state: EntityState) -> list[str]:
    """The entity, whether it is deleted, what it is linked to now, and what ended (newest first)."""
    entity = state.entity
    lines = [title(entity)]
    if entity.kind == "user" and entity.name and entity.name != entity.label:
        lines[0] += f", {entity.name}"
    if entity.created_ms is not None:
        lines.append(f"  created {when(entity.created_ms)}")
    if entity.deleted_ms is not None:
        lines.append(f"  deleted {when(entity.deleted_ms)}")
    if entity.created_ms is None and entity.deleted_ms is None and entity.label == entity.id:
        lines.append("  known only by id: no stored event describes it")
    now = [link for link in state.links if link.current]
    ended = [link for link in state.links if not link.current]
    lines += [f"  {phrase(link, entity)} since {when(link.since_ms)}" for link in now[:MAX_LINES]]
    if len(now) > MAX_LINES:
        lines.append(f"  … and {len(now) - MAX_LINES} more now")
    if not now:
        lines.append("  linked to nothing now")
    lines += [
        f"  was {phrase(link, entity)}, {when(link.since_ms)} to {when(link.until_ms)}"
        for link in ended[:MAX_LINES]
    ]
    earlier = max(len(ended), state.ended_total) - min(len(ended), MAX_LINES)
    if earlier > 0:
        lines.append(f"  … and {earlier} earlier links")
    return lines
