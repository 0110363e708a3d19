"""The wording of a user's update that links an identity to it ("identity google-oauth2 linked to user
ada@example.com"): it compares the user with `data.previous_object`, or for a stored event without it, with the
user as its newest earlier event gave it (entities/sentences.py reads that version)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

M = TypeVar("M")  # a mention of the user (entities/sentences.py `Mention`)


def linking_user(kind: str, data: Mapping[str, Any]) -> tuple[str, str] | None:
    """("user", id) of a user's update whose previous object `with_before` looks up, else None."""
    obj = data.get("object")
    if kind != "user.updated" or isinstance(data.get("previous_object"), dict) or not isinstance(obj, dict):
        return None
    ident = obj.get("user_id")
    if not isinstance(ident, str) or len(identities(obj)) < 2:  # one identity: nothing was linked to it
        return None
    return "user", ident


def with_before(
    kind: str, data: dict[str, Any], seq: int, before: Callable[[str, str, int], Mapping[str, Any] | None]
) -> Mapping[str, Any]:
    """A user's update with `previous_object` filled in from the store when an identity could have been linked
    (two or more now): what `describe` words as a link. (An unlink is worded when the service sends the
    previous object; a user has one identity far more often than not, and each lookup is a query.)"""
    key = linking_user(kind, data)
    if key is None:
        return data
    earlier = before(*key, seq)
    return {**data, "previous_object": earlier} if earlier is not None else data


def identities(obj: object) -> list[str]:
    """Each identity of a user object as "connection" (its provider when it names no connection)."""
    items = obj.get("identities") if isinstance(obj, Mapping) else None
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            name = item.get("connection") or item.get("provider")
            if isinstance(name, str) and name:
                out.append(name)
    return out


def linked(event_type: str, data: Mapping[str, Any], mention: Mapping[str, M]) -> list[str | M] | None:
    """ "identity google-oauth2 linked to user ada@…": a user update whose identities grew (or shrank: unlinked),
    compared with `previous_object`; None for any other event."""
    subject = mention.get("subject")
    if (
        event_type != "user.updated"
        or subject is None
        or not isinstance(data.get("previous_object"), Mapping)
    ):
        return None
    now, was = identities(data.get("object")), identities(data.get("previous_object"))
    added = [n for n in now if n not in was]
    removed = [n for n in was if n not in now]
    if added:
        return [f"{_noun(added)} {_and(added)} linked to user ", subject]
    if removed:
        return [f"{_noun(removed)} {_and(removed)} unlinked from user ", subject]
    return None


def _noun(names: list[str]) -> str:
    return "identity" if len(names) == 1 else "identities"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
