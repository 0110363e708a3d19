"""The review in words: a grant seen from its organization, group or user, a grant on its own, a change, and how
complete an answer is. Names are the event table's (`Entity.label`); a direct link is phrased as the timeline's
state says it (entities/state_text.py `phrase`), so the window, the CLI and the report read the same.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from tenant_events.access.records import Change, ChangeKind, Completeness, Diff, Grant, GrantKind, Snapshot
from tenant_events.entities.state_text import phrase, when
from tenant_events.store.entity_records import Entity, Link, Relation

_RELATIONS: Final = {
    GrantKind.ORG_MEMBER: Relation.ORG_MEMBER,
    GrantKind.ORG_ROLE: Relation.ORG_MEMBER_ROLE,
    GrantKind.ORG_CONNECTION: Relation.ORG_CONNECTION,
    GrantKind.ORG_GROUP_ROLE: Relation.ORG_GROUP_ROLE,
    GrantKind.GROUP_MEMBER: Relation.GROUP_MEMBER,
    GrantKind.GROUP_ROLE: Relation.GROUP_ROLE,
    GrantKind.GROUP_CONNECTION: Relation.GROUP_CONNECTION_MEMBER,
}
# A grant on its own, in one line: "grace@example.com has role admin in organization Stark".
_ALONE: Final = {
    GrantKind.ORG_MEMBER: "{user} is a member of organization {organization}",
    GrantKind.ORG_ROLE: "{user} has role {role} in organization {organization}",
    GrantKind.ORG_CONNECTION: "connection {connection} is enabled for organization {organization}",
    GrantKind.ORG_GROUP_ROLE: "group {group} has role {role} in organization {organization}",
    GrantKind.GROUP_MEMBER: "{user} is in group {group}",
    GrantKind.GROUP_CONNECTION: "connection {connection} is in group {group}",
    GrantKind.GROUP_ROLE: "group {group} has role {role}",
    GrantKind.ORG_ROLE_THROUGH_GROUP: "{user} has role {role} in organization {organization} through group {group}",
    GrantKind.ROLE_THROUGH_GROUP: "{user} has role {role} through group {group}",
}
# A grant that began, and one that ended.
_CHANGED: Final = {
    GrantKind.ORG_MEMBER: (
        "{user} joined organization {organization}",
        "{user} left organization {organization}",
    ),
    GrantKind.ORG_ROLE: (
        "{user} was given role {role} in organization {organization}",
        "{user} lost role {role} in organization {organization}",
    ),
    GrantKind.ORG_CONNECTION: (
        "connection {connection} added to organization {organization}",
        "connection {connection} removed from organization {organization}",
    ),
    GrantKind.ORG_GROUP_ROLE: (
        "group {group} was given role {role} in organization {organization}",
        "group {group} lost role {role} in organization {organization}",
    ),
    GrantKind.GROUP_MEMBER: ("{user} joined group {group}", "{user} left group {group}"),
    GrantKind.GROUP_CONNECTION: (
        "connection {connection} joined group {group}",
        "connection {connection} left group {group}",
    ),
    GrantKind.GROUP_ROLE: ("group {group} was given role {role}", "group {group} lost role {role}"),
    GrantKind.ORG_ROLE_THROUGH_GROUP: (
        "{user} was given role {role} in organization {organization} through group {group}",
        "{user} lost role {role} in organization {organization} through group {group}",
    ),
    GrantKind.ROLE_THROUGH_GROUP: (
        "{user} was given role {role} through group {group}",
        "{user} lost role {role} through group {group}",
    ),
}
# Grants through a group, seen from the user or the organization (the group's own lines say the rest).
_THROUGH: Final = {
    (
        GrantKind.ORG_ROLE_THROUGH_GROUP,
        "user",
    ): "role {role} in organization {organization} through group {group}",
    (GrantKind.ORG_ROLE_THROUGH_GROUP, "organization"): "member {user} has role {role} through group {group}",
    (GrantKind.ROLE_THROUGH_GROUP, "user"): "role {role} through group {group}",
}


def _names(grant: Grant) -> dict[str, str]:
    return {e.kind: e.label for e in grant.entities}


def seen_from(grant: Grant, entity: Entity) -> str:
    """The grant from `entity`'s side: "member grace@example.com has role admin" under organization Stark."""
    relation = _RELATIONS.get(grant.kind)
    if relation is not None:
        return phrase(Link(relation, _ends(grant, relation), grant.since_ms, None), entity)
    template = _THROUGH.get((grant.kind, entity.kind))
    return template.format(**_names(grant)) if template else alone(grant)


def _ends(grant: Grant, relation: Relation) -> tuple[Entity, ...]:
    order = {
        Relation.ORG_MEMBER: (grant.organization, grant.user),
        Relation.ORG_MEMBER_ROLE: (grant.organization, grant.user, grant.role),
        Relation.ORG_CONNECTION: (grant.organization, grant.connection),
        Relation.ORG_GROUP_ROLE: (grant.organization, grant.group, grant.role),
        Relation.GROUP_MEMBER: (grant.group, grant.user),
        Relation.GROUP_ROLE: (grant.group, grant.role),
        Relation.GROUP_CONNECTION_MEMBER: (grant.group, grant.connection),
    }[relation]
    return tuple(e for e in order if e is not None)


def alone(grant: Grant) -> str:
    """The grant in one line of its own."""
    return _ALONE[grant.kind].format(**_names(grant))


def change_line(change: Change) -> str:
    """The change in words: "grace@example.com was given role admin in organization Stark"."""
    began = change.kind in (ChangeKind.GRANTED, ChangeKind.JOINED, ChangeKind.CONNECTION_ADDED)
    return _CHANGED[change.grant.kind][0 if began else 1].format(**_names(change.grant))


def event_line(change: Change) -> str:
    """The event that did it, as the event table says it, with its id and who did it."""
    if change.event_id is None or change.sentence is None:
        return "(the event is no longer stored)"
    return f"{change.sentence.text} [{change.event_id}] {who_line(change)}"


def who_line(change: Change) -> str:
    """`by Backoffice Script (cli_123) from 203.0.113.7`: what the event says of who did it."""
    parts = []
    if change.client or change.client_id:
        both = change.client and change.client_id and change.client != change.client_id
        parts.append(
            f"by {change.client} ({change.client_id})" if both else f"by {change.client or change.client_id}"
        )
    if change.ip:
        parts.append(f"from {change.ip}")
    return " ".join(parts) or "(the event names no client or address)"


BEFORE_HISTORY: Final = "before the first stored event"


def since(ms: int | None) -> str:
    """When a grant began: its time, or that it began before the history (its removal proves it held)."""
    return BEFORE_HISTORY if ms is None else when(ms)


def moment(ms: int | None, newest_ms: int | None = None) -> str:
    """`2026-11-01 12:00:05 UTC`; None is now (with the newest stored event, when known)."""
    if ms is not None:
        return when(ms)
    return f"now (newest stored event {when(newest_ms)})" if newest_ms is not None else "now"


def completeness_lines(completeness: Completeness) -> list[str]:
    """Always at least one line: where the history starts; then each possible gap inside the range, and the
    events still being indexed."""
    if completeness.first_ms is None:
        lines = ["No history: no stored event has been indexed yet."]
    else:
        lines = [
            f"History complete from {when(completeness.first_ms)} (the first stored event); access given before "
            "then and not changed since is not known."
        ]
    for gap in completeness.gaps:
        end = when(gap.end_ms) if gap.end_ms is not None else "the newest stored event"
        lines.append(
            f"Possible gap: events from {when(gap.start_ms)} to {end} may be missing ({gap.reason})."
        )
    if completeness.behind:
        lines.append(
            f"{completeness.behind:,} newer stored events are still being indexed and are not counted."
        )
    return lines


def _precise(ms: int) -> str:
    """`2026-11-28 21:28:18.135 UTC`: to the millisecond, where a second's rounding would mislead."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def first_known(completeness: Completeness) -> str | None:
    """The first whole second the history can answer for, written as every other time (`when`), which the
    command line takes back as a WHEN."""
    if completeness.first_ms is None:
        return None
    return when(-(-completeness.first_ms // 1000) * 1000)


def unknown_reason(answer: Snapshot | Diff) -> str:
    """Why the history cannot answer about the moment asked (a snapshot's, a diff's earlier one), as one clause
    with no full stop (the command line adds its hint after a dash). Times as everywhere else, to the second; to
    the millisecond only when both fall in one second, where the seconds alone would read as the same time."""
    if isinstance(answer, Snapshot):
        asked, moment_ms = "Who held access at", answer.at_ms or 0
    else:
        asked, moment_ms = "What changed after", answer.from_ms
    first = answer.completeness.first_ms
    if first is None:
        return f"{asked} {when(moment_ms)} cannot be known: no stored event has been indexed yet"
    say = _precise if when(moment_ms) == when(first) else when
    return f"{asked} {say(moment_ms)} cannot be known: the stored history starts at {say(first)}"


def unknown_line(answer: Snapshot | Diff) -> str:
    """The answer about a moment the history does not reach, as a sentence (the window, the report)."""
    return unknown_reason(answer) + "."
