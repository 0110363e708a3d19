"""The summary of an event as a sentence with names instead of ids, made at display time.

"grace.hopper@example.com added to organization Stark as admin", "role support removed from group hr-8849": the
entities an event names (wire/references.py) are called by what the event itself says about its own object, else
by the name the entity directory knows (store/entity_reader.py), else by the event's own reference name, else
by id. A `Sentence` keeps each name as a `Mention` with its kind and raw id, so a view can make it a link and
keep the id one hover away; the stored summary (with ids) stays what full-text search matches.

Names are the names at the time of the event, in every view (the table, the inbox's event list, the alert's
notification and its message): for a stored event, a name the directory learnt from a later event (an
organization renamed since) is looked up as the entity's own events before this one gave it
(`describe_stored`), so one event does not read "Acme Cloud" in one place and "Acme Logistics" in another.

An update that links an identity to a user says so ("identity google-oauth2 linked to user ada@example.com"),
comparing the user with `data.previous_object`, or for a stored event without it, with the user as its newest
earlier event gave it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from tenant_events.entities.linked import linked, linking_user, with_before
from tenant_events.store.entity_records import Entity, StoredPayload
from tenant_events.values.events import StoredEvent
from tenant_events.wire import EventType, summarize
from tenant_events.wire.references import Ref, references, subject_name


class NameLookup(Protocol):
    """What the sentences need from the directory: the known entities among some (kind, id) keys."""

    def entities(self, keys: Iterable[tuple[str, str]]) -> Mapping[tuple[str, str], Entity]: ...


class BeforeLookup(NameLookup, Protocol):
    """A directory that also hands out an entity as each of its created/updated events left it, oldest first:
    names at the time of an event."""

    def objects_of(self, kind: str, entity_id: str) -> Sequence[tuple[int, Mapping[str, Any]]]: ...


class BoundedLookup(BeforeLookup, Protocol):
    """A directory whose entity versions can be asked for up to an event: only those stored before its seq."""

    def objects_of(
        self, kind: str, entity_id: str, before: int | None = None
    ) -> Sequence[tuple[int, Mapping[str, Any]]]: ...


@runtime_checkable
class ManyLookup(Protocol):
    """A directory that reads many entities' versions at once (store/timeline_query.py `objects_of_many`)."""

    def objects_of_many(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> Mapping[tuple[str, str], Sequence[tuple[int, Mapping[str, Any]]]]: ...


class StoredLookup(BeforeLookup, Protocol):
    """A directory that also hands out stored events' payloads (store/entity_reader.py `DirectoryReader`)."""

    def event_data(self, seqs: Iterable[int]) -> Mapping[int, StoredPayload]: ...
    def watermark(self) -> int: ...


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


def _label(ref: Ref, known: Mapping[tuple[str, str], Entity], then: Mapping[tuple[str, str], str]) -> str:
    if ref.place == "subject" and ref.name:
        return ref.name  # what the event says about its own object
    if (earlier := then.get((ref.kind, ref.id))) is not None:
        return earlier  # renamed since: the name at the time of the event
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


def describe(
    event_type: str,
    data: Mapping[str, Any],
    known: Mapping[tuple[str, str], Entity],
    then: Mapping[tuple[str, str], str] | None = None,
    refs: Sequence[Ref] | None = None,
) -> Sentence:
    """The sentence for one event; `known` holds the directory's entities for its references (see describe_all;
    `refs` when already found), `then` the names of those renamed since the event (see describe_stored). Never
    raises: an event that does not fit gets the stored one-line summary."""
    refs = references(event_type, data) if refs is None else refs
    mention: dict[str, Mention] = {}
    for ref in refs:
        mention.setdefault(ref.place, Mention(ref.kind, ref.id, _label(ref, known, then or {})))
    parts = linked(event_type, data, mention) or _parts(event_type, refs, mention)
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


def describe_stored(
    directory: StoredLookup, seqs: Iterable[int], names: NamesThen | None = None
) -> dict[int, Sentence]:
    """Sentences for stored events by seq (a table model's visible rows): two queries for the whole page, and one
    more for each entity renamed after an event that names it, or a user whose identities an update changed
    (`names`: kept from earlier pages, so each is asked once)."""
    return describe_payloads(directory, directory.event_data(seqs), names)


class WholeLookup(StoredLookup, Protocol):
    """A directory that also reads every entity's names by seq at once (store/entity_reader.py)."""

    def every_name(self) -> Mapping[tuple[str, str], tuple[Sequence[int], Sequence[str | None]]]: ...


def export_summaries(directory: WholeLookup) -> Callable[[Sequence[StoredEvent]], list[str]]:
    """`summaries` for an export's chunks, in order: every entity's names read once, with the first chunk (on the
    thread that writes the export), instead of a look-up per renamed entity."""
    names: list[NamesThen] = []

    def say(events: Sequence[StoredEvent]) -> list[str]:
        if not names:
            names.append(NamesThen(directory, directory.every_name()))
        return summaries(directory, events, names[0])

    return say


def summaries(
    directory: StoredLookup, events: Sequence[StoredEvent], names: NamesThen | None = None
) -> list[str]:
    """Each event's Summary as the event table shows it (page_names.py): the sentence with the names at its time,
    the stored summary for an event the directory cannot say (an unreadable payload). An export passes one
    `names` for all its chunks."""
    said = describe_stored(directory, [e.seq for e in events], names)
    return [s.text if (s := said.get(e.seq)) is not None else e.summary for e in events]


NameHistory = Mapping[tuple[str, str], tuple[Sequence[int], Sequence[str | None]]]  # (kind, id) → seqs, names


class NamesThen:
    """Entities as they were called at the time of an event: each entity's versions asked of the directory once,
    however many events name it (a page of the table, a whole export)."""

    def __init__(self, directory: BeforeLookup, every_name: NameHistory | None = None) -> None:
        self.directory = directory
        self._versions: dict[tuple[str, str], tuple[list[int], list[Mapping[str, Any]]]] = {}
        self._names = every_name  # every entity's names by seq, read at once (an export: most rows name one)
        # (kind, id) → the seq from which its versions (read ahead from a floor) say it
        self._from: dict[tuple[str, str], int] = {}

    def read_ahead(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        """Read the versions of the entities among `keys` not read yet in one go, where the directory can (an
        access diff's thousands over a team's archive: one archive statement instead of one an entity). With
        `floors`, each as far as it is asked about from its floor on (a page: its oldest row naming it), so one
        whose latest versions are live needs no archive read; asked about earlier, it is read again whole."""
        if self._names is not None or not isinstance(self.directory, ManyLookup):
            return
        missing = [key for key in dict.fromkeys(keys) if key not in self._versions]
        if len(missing) > 1:
            wanted = {key: floors[key] for key in missing if key in floors} if floors is not None else None
            for key, pairs in self.directory.objects_of_many(missing, wanted).items():
                self._versions[key] = ([s for s, _o in pairs], [o for _s, o in pairs])
                if wanted is not None and key in wanted:
                    self._from[key] = wanted[key]

    def before(self, kind: str, entity_id: str, seq: int) -> Mapping[str, Any] | None:
        """The entity as its newest created/updated event stored before `seq` left it (None: none stored)."""
        versions = self._versions.get((kind, entity_id))
        if versions is None or seq < self._from.get((kind, entity_id), seq):
            self._from.pop((kind, entity_id), None)
            pairs = self.directory.objects_of(kind, entity_id)
            versions = self._versions[kind, entity_id] = ([s for s, _o in pairs], [o for _s, o in pairs])
        at = bisect_left(versions[0], seq) - 1
        return versions[1][at] if at >= 0 else None

    def name(self, entity: Entity | None, seq: int, stamp: int) -> str | None:
        """What the entity was called at the event (`seq`, its directory `stamp`) when renamed since, else None."""
        if entity is None or (entity.label_stamp or 0) <= stamp:
            return None
        if self._names is not None:
            seqs, names = self._names.get((entity.kind, entity.id), ((), ()))
            at = bisect_left(seqs, seq) - 1
            return names[at] if at >= 0 else None
        obj = self.before(entity.kind, entity.id, seq)
        return subject_name(entity.kind, obj) if obj is not None else None

    def entity(self, entity: Entity, seq: int, stamp: int) -> Entity:
        """The entity labelled with its name at the event (itself when not renamed since)."""
        named = self.name(entity, seq, stamp)
        if named is None:
            return entity
        if entity.kind == "user":
            return replace(entity, email=named)
        if entity.kind == "organization":
            return replace(entity, display=named)
        return replace(entity, name=named, detail=None)  # (a connection's strategy: said with its name)


class NamesUpTo(NamesThen):
    """NamesThen that reads an entity's versions only up to the event asked about, and again when a later event
    asks: the alert rules name a catch-up's first alerts this way, where the store already holds the rest of the
    backlog after them (searched by substring while the full-text index is behind, each look-up read all of it)."""

    def __init__(self, directory: BoundedLookup) -> None:
        super().__init__(directory)
        self._bounded = directory
        self._upto: dict[tuple[str, str], int] = {}  # (kind, id) → the seq its versions were read before

    def read_ahead(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        return  # (each entity's versions are read up to the event asked about)

    def before(self, kind: str, entity_id: str, seq: int) -> Mapping[str, Any] | None:
        key = (kind, entity_id)
        if seq > self._upto.get(key, -1):
            pairs = self._bounded.objects_of(kind, entity_id, before=seq)
            self._versions[key] = ([s for s, _o in pairs], [o for _s, o in pairs])
            self._upto[key] = seq
        return super().before(kind, entity_id, seq)


class NamesNow(NamesThen):
    """The names the directory holds now, never what an entity was called before: a first wording with no
    look-up per renamed entity (each one reads the entity's history). The alert rules say a growing alert's
    latest event this way, and again with the names at its time once it stops growing (alerts/evaluator.py)."""

    def read_ahead(
        self, keys: Iterable[tuple[str, str]], floors: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        return

    def before(self, kind: str, entity_id: str, seq: int) -> Mapping[str, Any] | None:
        return None

    def name(self, entity: Entity | None, seq: int, stamp: int) -> str | None:
        return None


def describe_payloads(
    directory: BeforeLookup, payloads: Mapping[int, StoredPayload], names: NamesThen | None = None
) -> dict[int, Sentence]:
    """Sentences for stored events' payloads by seq, every name as it was at the event's time (one directory
    query for the names, and the versions of the entities renamed since an event that names them: read at once
    where the directory can, `NamesThen.read_ahead`, else one query an entity)."""
    found = {seq: references(p.type, p.data) for seq, p in payloads.items()}
    wanted = {(r.kind, r.id) for refs in found.values() for r in refs}
    known = directory.entities(wanted) if wanted else {}
    names = names or NamesThen(directory)
    floors: dict[tuple[str, str], int] = {}
    for key, seq in _renamed(payloads, found, known):
        floors[key] = min(seq, floors.get(key, seq))
    names.read_ahead(floors, floors)
    out: dict[int, Sentence] = {}
    for seq, (kind, data, stamp) in payloads.items():
        then: dict[tuple[str, str], str] = {}
        for ref in found[seq]:
            named = None if ref.place == "subject" else names.name(known.get((ref.kind, ref.id)), seq, stamp)
            if named is not None:
                then[ref.kind, ref.id] = named
        # (a user's previous object, filled in, names no other entity: the references stand)
        out[seq] = describe(kind, with_before(kind, data, seq, names.before), known, then, found[seq])
    return out


def _renamed(
    payloads: Mapping[int, StoredPayload],
    found: Mapping[int, Sequence[Ref]],
    known: Mapping[tuple[str, str], Entity],
) -> Iterator[tuple[tuple[str, str], int]]:
    """The entities whose versions the sentences will read, each with the seq of an event that reads them: those
    renamed since an event that names them (not as its subject), and a user whose update could have linked an
    identity (entities/linked.py `with_before`)."""
    for seq, (kind, data, stamp) in payloads.items():
        for ref in found[seq]:
            entity = known.get((ref.kind, ref.id))
            if ref.place != "subject" and entity is not None and (entity.label_stamp or 0) > stamp:
                yield (ref.kind, ref.id), seq
        if (key := linking_user(kind, data)) is not None:
            yield key, seq
