"""Summary sentences with names for the rows the event table holds, made when a page is read, never per paint.

The table's page cache (page_cache.py) hands every page it reads to `PageNames.page_read`: one directory query for
the page's payloads and one for the names they mention (entities/sentences.py `describe_stored`), so painting
and scrolling within held pages costs nothing more. The stored summary, with raw ids, stays what search matches.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, Protocol, runtime_checkable

from tenant_events.entities.sentences import Sentence, StoredLookup, describe_stored
from tenant_events.store.records import StoredEvent

KEEP: Final = 24 * 256 * 2  # twice the rows the page cache holds (page_cache.MAX_PAGES × PAGE)


class PageNames:
    """Sentences by stored seq for one tenant's directory (None: no directory, the stored summary is shown)."""

    def __init__(self, directory: StoredLookup | None = None) -> None:
        self.directory = directory
        self._sentences: OrderedDict[int, Sentence] = OrderedDict()

    def clear(self, directory: StoredLookup | None = None) -> None:
        self.directory = directory
        self._sentences.clear()

    def page_read(self, rows: Sequence[StoredEvent]) -> None:
        """Describe the rows not described yet (two queries for the page)."""
        if self.directory is None:
            return
        wanted = [e.seq for e in rows if e.seq not in self._sentences]
        if not wanted:
            return
        self._sentences.update(describe_stored(self.directory, wanted))
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


@runtime_checkable
class NamedPages(Protocol):
    """A table store that can hand out its tenant's directory (reader_pages.py `ReaderPages`)."""

    def directory(self) -> StoredLookup: ...


def mention_lines(sentence: Sentence) -> list[str]:
    """Each named entity with its raw id, for a tooltip: `user grace@example.com: auth0|3de8…`."""
    return [
        f"{m.kind} {m.label}: {m.id}" if m.label != m.id else f"{m.kind} {m.id}" for m in sentence.mentions
    ]
