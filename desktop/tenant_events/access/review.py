"""The access review of one tenant: access at a moment, and what changed between two moments.

Both come from the links that held at a moment (access/source.py `HistorySource.held_at`): a snapshot names them
and adds the roles users hold through their groups (a member of a group that holds a role holds it too); a diff
compares two snapshots. Every grant keeps the span of time it held around the moment — a grant through a group
holds while both its membership and the group's role hold — so a change names the event that did it: the one that
began the grant's span at the later moment, or the one that ended it after the earlier.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from tenant_events.access.records import (
    Change,
    ChangeKind,
    Completeness,
    Diff,
    Grant,
    GrantKind,
    Snapshot,
)
from tenant_events.access.source import HistorySource
from tenant_events.entities.sentences import NamesThen, Sentence, describe_payloads
from tenant_events.store.access_records import EventFacts, HeldAt, HistoryReach, LinkSpan
from tenant_events.store.entity_records import Entity, Relation, StoredPayload
from tenant_events.store.entity_state import ENDS

STAMP_SHIFT: Final = 20
NOW: Final = 2**62 - 1  # a stamp after every event: "now"
_KINDS: Final = {
    Relation.ORG_MEMBER: GrantKind.ORG_MEMBER,
    Relation.ORG_MEMBER_ROLE: GrantKind.ORG_ROLE,
    Relation.ORG_CONNECTION: GrantKind.ORG_CONNECTION,
    Relation.ORG_GROUP_ROLE: GrantKind.ORG_GROUP_ROLE,
    Relation.GROUP_MEMBER: GrantKind.GROUP_MEMBER,
    Relation.GROUP_ROLE: GrantKind.GROUP_ROLE,
    Relation.GROUP_CONNECTION_MEMBER: GrantKind.GROUP_CONNECTION,
}
# The field of a Grant each end of a relation fills, in the relation's order: the ends' kinds.
_FIELDS: Final = {Relation[rel.name]: kinds for rel, kinds in ENDS.items()}
_ORDER: Final = {kind: rank for rank, kind in enumerate(GrantKind)}


def moment_stamp(moment_ms: int | None) -> int:
    """The stamp that counts every event of `moment_ms`'s millisecond (None, or past every stamp: now)."""
    if moment_ms is None or moment_ms >= NOW >> STAMP_SHIFT:
        return NOW
    return (max(moment_ms, -1) << STAMP_SHIFT) | ((1 << STAMP_SHIFT) - 1)


@dataclass(frozen=True, slots=True)
class _Held:
    """A grant with the span it held in around the moment: [since, until) stamps and the events at both ends."""

    grant: Grant
    since: int
    until: int | None
    until_seq: int | None


class AccessReview:
    """Snapshots and diffs of one tenant (`tenant`: the name the user knows it by) over its history."""

    def __init__(self, tenant: str, source: HistorySource) -> None:
        self.tenant = tenant
        self.source = source

    def at(self, at_ms: int | None) -> Snapshot:
        """Access at `at_ms` (None: now)."""
        held = self.source.held_at(moment_stamp(at_ms))
        completeness = _completeness(held.reach, None, at_ms)
        if not completeness.knows(at_ms if at_ms is not None else NOW >> STAMP_SHIFT):
            return Snapshot(self.tenant, at_ms, (), completeness, known=False)
        facts = self.source.events(span.since_seq for span in held.spans)
        ids = {seq: fact.event_id for seq, fact in facts.items()}
        grants = [h.grant for h in self._grants(held, ids)]
        return Snapshot(self.tenant, at_ms, tuple(sorted(grants, key=sort_key)), completeness)

    def diff(self, from_ms: int, to_ms: int | None) -> Diff:
        """What changed after `from_ms` up to `to_ms` (None: now); net: a grant held at both moments is no change."""
        before = self.source.held_at(moment_stamp(from_ms))
        after = self.source.held_at(moment_stamp(to_ms))
        completeness = _completeness(after.reach, from_ms, to_ms)
        if not completeness.knows(from_ms):
            return Diff(self.tenant, from_ms, to_ms, (), completeness, known=False)
        was = {h.grant.key: h for h in self._grants(before)}
        now = {h.grant.key: h for h in self._grants(after)}
        # (grant, the event that did it, its stamp, whether it began): a grant gone at the later moment ended
        # inside the range, so its span there has an end
        began = [(h.grant, h.grant.seq, h.since, True) for key, h in now.items() if key not in was]
        ended = [
            (h.grant, h.until_seq, h.until, False)
            for key, h in was.items()
            if key not in now and h.until_seq is not None and h.until is not None
        ]
        facts = self.source.events(seq for _g, seq, _at, _b in [*began, *ended])
        payloads = {seq: StoredPayload(f.type, f.data, _stamp(f)) for seq, f in facts.items()}
        names = NamesThen(self.source)  # (one for the sentences and the grants: each entity read once)
        names.read_ahead(
            (e.kind, e.id)
            for grant, _seq, at, _adds in [*began, *ended]
            for e in grant.entities
            if (e.label_stamp or 0) > at
        )
        sentences = describe_payloads(self.source, payloads, names)
        changes = [
            _change(
                _then(grant, seq, at, names), seq, at >> STAMP_SHIFT, adds, facts.get(seq), sentences.get(seq)
            )
            for grant, seq, at, adds in [*began, *ended]
        ]
        changes.sort(key=lambda c: (c.at_ms, c.seq, sort_key(c.grant)))
        return Diff(self.tenant, from_ms, to_ms, tuple(changes), completeness)

    def _grants(self, held: HeldAt, ids: Mapping[int, str] | None = None) -> list[_Held]:
        """The moment's links as grants, named, with the roles users hold through their groups; `ids`: the event
        ids of the events that began them, by seq."""
        wanted = {(kind, ident) for span in held.spans for kind, ident in _ends(span)}
        known = self.source.entities(wanted)
        out = [_direct(span, known, ids or {}) for span in held.spans]
        return out + _through_groups(out, ids or {})


def _ends(span: LinkSpan) -> list[tuple[str, str]]:
    """(kind, id) of a span's ends: a Grant's field names are the entity kinds."""
    return list(zip(_FIELDS[span.relation], span.ids, strict=True))


def _direct(span: LinkSpan, known: Mapping[tuple[str, str], Entity], ids: Mapping[int, str]) -> _Held:
    ends = {
        field: known.get((field, ident)) or Entity(field, ident)
        for field, ident in zip(_FIELDS[span.relation], span.ids, strict=True)
    }
    grant = Grant(
        _KINDS[span.relation],
        span.since_ms,
        span.since_seq,
        organization=ends.get("organization"),
        group=ends.get("group"),
        user=ends.get("user"),
        role=ends.get("role"),
        connection=ends.get("connection"),
        event_id=ids.get(span.since_seq),
    )
    return _Held(grant, span.since, span.until, span.until_seq)


def _through_groups(direct: list[_Held], ids: Mapping[int, str]) -> list[_Held]:
    """A member of a group holds the group's roles: in the tenant (a group role), or in an organization (an
    organization's role given to the group). It holds from the later start to the earlier end of the two."""
    members: dict[str, list[_Held]] = defaultdict(list)
    roles: dict[str, list[_Held]] = defaultdict(list)
    for h in direct:
        group = h.grant.group
        if group is None:
            continue
        if h.grant.kind is GrantKind.GROUP_MEMBER:
            members[group.id].append(h)
        elif h.grant.kind in (GrantKind.GROUP_ROLE, GrantKind.ORG_GROUP_ROLE):
            roles[group.id].append(h)
    out = []
    for group_id, givers in roles.items():
        for role in givers:
            kind = (
                GrantKind.ORG_ROLE_THROUGH_GROUP
                if role.grant.kind is GrantKind.ORG_GROUP_ROLE
                else GrantKind.ROLE_THROUGH_GROUP
            )
            for member in members.get(group_id, ()):
                later = max(member, role, key=lambda h: h.since)
                ends = [h for h in (member, role) if h.until is not None]
                first_end = min(ends, key=lambda h: h.until or 0) if ends else None
                grant = Grant(
                    kind,
                    later.grant.since_ms,
                    later.grant.seq,
                    organization=role.grant.organization,
                    group=role.grant.group,
                    user=member.grant.user,
                    role=role.grant.role,
                    event_id=ids.get(later.grant.seq),
                )
                until = first_end.until if first_end else None
                out.append(_Held(grant, later.since, until, first_end.until_seq if first_end else None))
    return out


def sort_key(grant: Grant) -> tuple[Any, ...]:
    """Kinds in GrantKind's order, then by the names of their entities."""
    return (_ORDER[grant.kind], *((e.label.casefold(), e.id) for e in grant.entities))


def _completeness(reach: HistoryReach, low_ms: int | None, high_ms: int | None) -> Completeness:
    """The reach, with the possible gaps inside the range asked about (for a moment, from the first event on)."""
    low = low_ms if low_ms is not None else (reach.first_ms or 0)
    high = high_ms if high_ms is not None else NOW >> STAMP_SHIFT
    gaps = tuple(g for g in reach.gaps if g.overlaps(low, high))
    return Completeness(reach.first_ms, reach.newest_ms, gaps, reach.behind)


def _stamp(fact: EventFacts) -> int:
    """The event's directory stamp (store/entity_records.py StoredPayload)."""
    return (fact.time_ms << STAMP_SHIFT) | (fact.seq & ((1 << STAMP_SHIFT) - 1))


def _then(grant: Grant, seq: int, stamp: int, names: NamesThen) -> Grant:
    """The grant with its entities named as they were when the change happened, as the event table names them
    in that event's row (an organization renamed since keeps its old name in an old change)."""
    return replace(
        grant,
        organization=grant.organization and names.entity(grant.organization, seq, stamp),
        group=grant.group and names.entity(grant.group, seq, stamp),
        user=grant.user and names.entity(grant.user, seq, stamp),
        role=grant.role and names.entity(grant.role, seq, stamp),
        connection=grant.connection and names.entity(grant.connection, seq, stamp),
    )


def _part(data: Mapping[str, Any], *path: str) -> str | None:
    value: Any = data
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value if isinstance(value, str) and value else None


def who(data: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """The client (name, id) and IP address an event's `data.context` names."""
    return (
        _part(data, "context", "client", "name"),
        _part(data, "context", "client", "id"),
        _part(data, "context", "request", "ip"),
    )


def _change(
    grant: Grant, seq: int, at_ms: int, adds: bool, fact: EventFacts | None, sentence: Sentence | None
) -> Change:
    kind = {
        GrantKind.ORG_MEMBER: (ChangeKind.JOINED, ChangeKind.LEFT),
        GrantKind.GROUP_MEMBER: (ChangeKind.JOINED, ChangeKind.LEFT),
        GrantKind.GROUP_CONNECTION: (ChangeKind.JOINED, ChangeKind.LEFT),
        GrantKind.ORG_CONNECTION: (ChangeKind.CONNECTION_ADDED, ChangeKind.CONNECTION_REMOVED),
    }.get(grant.kind, (ChangeKind.GRANTED, ChangeKind.REMOVED))[0 if adds else 1]
    client, client_id, ip = who(fact.data) if fact else (None, None, None)
    return Change(
        kind,
        grant,
        at_ms,
        seq,
        fact.event_id if fact else None,
        fact.type if fact else None,
        sentence,
        client,
        client_id,
        ip,
    )
