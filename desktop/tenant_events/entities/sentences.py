"""The summary of an event as a sentence with names instead of ids, made at display time.

"grace.hopper@example.com added to organization Stark as admin", "role support removed from group hr-8849": the
entities an event names (wire/references.py) are called by what the event itself says about its own object, else
by the name the entity directory knows now (store/entity_reader.py), else by the event's own reference name,
else by id. A `Sentence` keeps each name as a `Mention` with its kind and raw id, so a view can make it a link
and keep the id one hover away; the stored summary (with ids) stays what full-text search matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from tenant_events.store.entity_records import Entity
from tenant_events.wire import EventType, summarize
from tenant_events.wire.references import Ref, references


class NameLookup(Protocol):
    """What the sentences need from the directory: the known entities among some (kind, id) keys."""

    def entities(self, keys: Iterable[tuple[str, str]]) -> Mapping[tuple[str, str], Entity]: ...


class StoredLookup(NameLookup, Protocol):
    """A directory that also hands out stored events' payloads (store/entity_reader.py `DirectoryReader`)."""

    def event_data(self, seqs: Iterable[int]) -> Mapping[int, tuple[str, dict[str, Any]]]: ...


@dataclass(frozen=True, slots=True)
class Mention:
    """A named entity inside a sentence."""

    kind: str
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class Sentence:
    """Plain text and mentions, in reading order."""

    parts: tuple[str | Mention, ...]

    @property
    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.label for p in self.parts)

    @property
    def mentions(self) -> tuple[Mention, ...]:
        return tuple(p for p in self.parts if isinstance(p, Mention))

    def __str__(self) -> str:
        return self.text


def _label(ref: Ref, known: Mapping[tuple[str, str], Entity]) -> str:
    if ref.place == "subject" and ref.name:
        return ref.name  # what the event says about its own object
    entity = known.get((ref.kind, ref.id))
    if entity is not None and entity.label != entity.id:
        return entity.label
    return ref.name or ref.id


_VERB_PREP = {
    "added": ("added", "to"),
    "deleted": ("removed", "from"),
    "removed": ("removed", "from"),
    "assigned": ("assigned", "to"),
    "updated": ("updated", "in"),
}


def _parts(event_type: str, refs: Sequence[Ref], mention: dict[str, Mention]) -> list[str | Mention] | None:
    """The sentence of one event type, or None when the payload lacks what it needs."""
    family, _, rest = event_type.partition(".")
    verb = rest.rsplit(".", 1)[-1]
    said, prep = _VERB_PREP.get(verb, (verb, "in"))
    subject = mention.get("subject")
    if "." not in rest:  # created / updated / deleted of the event's own object
        if subject is None:
            return None
        tail: list[str | Mention] = []
        if family == "group" and verb == "created" and (parent := mention.get("parent")) is not None:
            tail = [f" in {parent.kind} ", parent]
        return [f"{family} ", subject, f" {verb}", *tail]
    org, user, group, role = (mention.get(k) for k in ("organization", "user", "group", "role"))
    connection, member = mention.get("connection"), mention.get("member")
    in_org: list[str | Mention] = [" in organization ", org] if org is not None else []
    if rest.startswith("member.role.") and org and user and role:
        if verb == "assigned":
            return [user, " added to organization ", org, " as ", role]
        return ["role ", role, " removed from ", user, *in_org]
    if rest.startswith("member.") and family == "organization" and org and user:
        return [user, f" {said} {prep} organization ", org]
    if rest.startswith("connection.") and org and connection:
        return ["connection ", connection, f" {said} {prep} organization ", org]
    if rest.startswith("group.role.") and org and group and role:
        return ["role ", role, f" {said} {prep} group ", group, *in_org]
    if rest.startswith("member.") and group and member:
        who: list[str | Mention] = [member] if member.kind == "user" else ["connection ", member]
        return [*who, f" {said} {prep} group ", group]
    if rest.startswith("role.") and group and role:
        return ["role ", role, f" {said} {prep} group ", group]
    return None


def describe(event_type: str, data: Mapping[str, Any], known: Mapping[tuple[str, str], Entity]) -> Sentence:
    """The sentence for one event; `known` holds the directory's entities for its references (see describe_all).
    Never raises: an event that does not fit gets the stored one-line summary."""
    refs = references(event_type, data)
    mention: dict[str, Mention] = {}
    for ref in refs:
        mention.setdefault(ref.place, Mention(ref.kind, ref.id, _label(ref, known)))
    parts = _parts(event_type, refs, mention)
    if parts is None:
        try:
            return Sentence((summarize(EventType(event_type), dict(data)),))
        except ValueError:
            return Sentence((event_type,))
    return Sentence(tuple(parts))


def describe_all(events: Sequence[tuple[str, Mapping[str, Any]]], directory: NameLookup) -> list[Sentence]:
    """Sentences for a page of (event type, `data`) pairs with one directory lookup for all their names."""
    wanted = {(r.kind, r.id) for kind, data in events for r in references(kind, data)}
    known = directory.entities(wanted) if wanted else {}
    return [describe(kind, data, known) for kind, data in events]


def describe_stored(directory: StoredLookup, seqs: Iterable[int]) -> dict[int, Sentence]:
    """Sentences for stored events by seq (a table model's visible rows): two queries for the whole page."""
    payloads = directory.event_data(seqs)
    order = list(payloads)
    sentences = describe_all([payloads[seq] for seq in order], directory)
    return dict(zip(order, sentences, strict=True))
