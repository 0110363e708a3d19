"""A set with O(1) add, discard and uniform random pick, so tenant life stays fast at a million events."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Bag(Generic[T]):
    def __init__(self) -> None:
        self._items: list[T] = []
        self._pos: dict[T, int] = {}

    def add(self, item: T) -> None:
        if item not in self._pos:
            self._pos[item] = len(self._items)
            self._items.append(item)

    def discard(self, item: T) -> None:
        index = self._pos.pop(item, None)
        if index is None:
            return
        last = self._items.pop()
        if index < len(self._items):  # move the last item into the hole
            self._items[index] = last
            self._pos[last] = index

    def pick(self, rng: random.Random) -> T | None:
        return self._items[rng.randrange(len(self._items))] if self._items else None

    def __contains__(self, item: object) -> bool:
        return item in self._pos

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        return iter(list(self._items))
