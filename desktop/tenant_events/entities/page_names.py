"""Summary sentences with names for the rows the event table holds, made when a page is read, never per paint.

The table's page cache (view/page_cache.py) hands every page it reads to `PageNames.page_read`. With an asyncio
loop running (the app), the page's sentences are made on a worker thread — one directory query for the payloads
and one for the names (entities/sentences.py `describe_stored`) — and `on_ready` tells the table to repaint its
Summary column: scrolling never waits for names, and the stored summary shows for the few ms until they arrive.
Without a loop (scripts, plain model tests) they are made at once. The stored summary, with raw ids, stays what
search matches.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Final

from tenant_events.entities.sentences import Sentence, StoredLookup, describe_stored
from tenant_events.values.events import StoredEvent

KEEP: Final = (
    24 * 256
)  # the rows the page cache holds (page_cache.MAX_PAGES × PAGE): the others are read again


class PageNames:
    """Sentences by stored seq for one tenant's directory (None: no directory, the stored summary is shown)."""

    def __init__(self, directory: StoredLookup | None = None) -> None:
        self.directory = directory
        self._sentences: OrderedDict[int, Sentence] = OrderedDict()
        self._queued: dict[int, None] = {}
        self._task: asyncio.Task[None] | None = None
        self.on_ready: Callable[[], None] | None = None  # sentences arrived from the worker
        self.keep_task: Callable[[asyncio.Task[Any]], None] | None = None  # the owner awaits it at shutdown

    def clear(self, directory: StoredLookup | None = None) -> None:
        self.directory = directory
        self._sentences.clear()
        self._queued.clear()

    def page_read(self, rows: Sequence[StoredEvent]) -> None:
        """Describe the rows not described yet: on a worker when a loop runs, else now."""
        if self.directory is None:
            return
        wanted = [e.seq for e in rows if e.seq not in self._sentences]
        if not wanted:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._keep(describe_stored(self.directory, wanted))
            return
        self._queued.update(dict.fromkeys(wanted))
        if self._task is None:
            self._task = loop.create_task(self._drain())
            if self.keep_task is not None:
                self.keep_task(self._task)

    async def _drain(self) -> None:
        try:
            while self._queued and self.directory is not None:
                directory, seqs = self.directory, list(self._queued)
                self._queued.clear()
                said = await asyncio.to_thread(describe_stored, directory, seqs)
                if directory is self.directory:  # not a tenant the table has left meanwhile
                    self._keep(said)
                    if self.on_ready is not None:
                        self.on_ready()
        finally:
            self._task = None

    def _keep(self, said: dict[int, Sentence]) -> None:
        self._sentences.update(said)
        while len(self._sentences) > KEEP:
            self._sentences.popitem(last=False)

    def sentence(self, seq: int) -> Sentence | None:
        return self._sentences.get(seq)

    def text(self, ev: StoredEvent) -> str:
        """The Summary cell: the sentence once its page was described, else the stored summary."""
        sentence = self._sentences.get(ev.seq)
        return ev.summary if sentence is None else sentence.text

    def tooltip(self, ev: StoredEvent) -> str:
        """The sentence, then each name's raw id (the ids search finds)."""
        sentence = self._sentences.get(ev.seq)
        if sentence is None or not sentence.mentions:
            return ev.summary
        return "\n".join([sentence.text, *mention_lines(sentence)])


def mention_lines(sentence: Sentence) -> list[str]:
    """Each named entity with its raw id, for a tooltip: `user grace@example.com: auth0|3de8…`."""
    return [
        f"{m.kind} {m.label}: {m.id}" if m.label != m.id else f"{m.kind} {m.id}" for m in sentence.mentions
    ]
