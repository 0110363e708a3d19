"""Summary sentences with names for the rows the event table holds, made when a page is read, never per paint.

The table's page cache (view/page_cache.py) hands every page it reads to `PageNames.page_read`. With an asyncio
loop running (the app), the page's sentences are made on a worker thread — one directory query for the payloads
and one for the names (entities/sentences.py `describe_stored`) — and `on_ready` tells the table to repaint its
Summary column: scrolling never waits for names, and the stored summary shows for the few ms until they arrive.
Without a loop (scripts, plain model tests) they are made at once. The stored summary, with raw ids, stays what
search matches. While the store cannot be read (the writer opening its database again after another program
removed a file of it) the rows are kept queued and tried again a second later, so their names still come. Rows
past the directory's watermark (a catch-up batch, which the indexer puts into the directory later) are said with
the ids they carry for now, and said again once the directory has reached them: for as long as the directory keeps
moving (a long catch-up on a busy machine takes minutes), and a minute more once it stops.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from tenant_events.entities.sentences import Sentence, StoredLookup, describe_stored
from tenant_events.errors import StorageError
from tenant_events.values.events import StoredEvent

# the rows the page cache holds (page_cache.MAX_PAGES × PAGE): the others are read again
KEEP: Final = 24 * 256
RETRY_S: Final = 1.0  # after the store could not be read
RETRIES: Final = 60  # in a row, before the rows wait for the next page read


class PageNames:
    """Sentences by stored seq for one tenant's directory (None: no directory, the stored summary is shown)."""

    def __init__(
        self,
        directory: StoredLookup | None = None,
        *,
        retry_s: float = RETRY_S,
        retries: int = RETRIES,
        run: Callable[..., Awaitable[Any]] = asyncio.to_thread,
    ) -> None:
        """`run`: how a worker thread is given the directory's queries (the window's: below its priority)."""
        self.directory = directory
        self._run = run
        self._retry_s, self._retries = retry_s, retries
        self._sentences: OrderedDict[int, Sentence] = OrderedDict()
        self._queued: dict[int, None] = {}
        self._early: set[int] = set()  # said before the directory reached them: said again once it has
        self._task: asyncio.Task[None] | None = None
        self.on_ready: Callable[[], None] | None = None  # sentences arrived from the worker
        self.keep_task: Callable[[asyncio.Task[Any]], None] | None = None  # the owner awaits it at shutdown

    def clear(self, directory: StoredLookup | None = None) -> None:
        self.directory = directory
        self._sentences.clear()
        self._queued.clear()
        self._early.clear()

    def page_read(self, rows: Sequence[StoredEvent]) -> None:
        """Describe the rows not described yet: on a worker when a loop runs, else now."""
        if self.directory is None:
            return
        wanted = [e.seq for e in rows if e.seq not in self._sentences or e.seq in self._early]
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
        failed, reached = 0, -1
        try:
            while self._queued and self.directory is not None:
                directory, seqs = self.directory, list(self._queued)
                self._queued.clear()
                try:
                    said, upto = await self._run(_describe, directory, seqs)
                except StorageError:  # being opened again: the same rows, a little later
                    if directory is not self.directory:
                        continue  # a tenant the table has left meanwhile: the new one's rows
                    self._queued.update(dict.fromkeys(seqs))
                    failed += 1
                    if failed > self._retries:
                        return  # kept queued: the next page read tries them again
                    await asyncio.sleep(self._retry_s)
                    continue
                if directory is not self.directory:
                    continue
                self._keep(said)
                early = {seq for seq in seqs if seq > upto}
                self._early.difference_update(seqs)
                self._early.update(early)
                if self.on_ready is not None:
                    self.on_ready()
                if not early:
                    failed = 0
                    continue
                # the directory behind: these rows again, a little later; the count of tries starts again while
                # the indexer is still moving, so a long catch-up still ends with names
                failed = 1 if upto > reached else failed + 1
                reached = max(reached, upto)
                if failed > self._retries and not self._queued:
                    return  # still marked early: the next page read of them tries again
                if not self._queued:
                    await asyncio.sleep(self._retry_s)
                self._queued.update(dict.fromkeys(early))
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


def _describe(directory: StoredLookup, seqs: list[int]) -> tuple[dict[int, Sentence], int]:
    """The sentences, and the directory's watermark read before them: rows past it were said without names."""
    upto = directory.watermark()
    return describe_stored(directory, seqs), upto


def mention_lines(sentence: Sentence) -> list[str]:
    """Each named entity with its raw id, for a tooltip: `user grace@example.com: auth0|3de8…`."""
    return [
        f"{m.kind} {m.label}: {m.id}" if m.label != m.id else f"{m.kind} {m.id}" for m in sentence.mentions
    ]
