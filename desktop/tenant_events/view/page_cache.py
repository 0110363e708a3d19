"""The event table's page cache: which pages of the current snapshot are held and how a missing one is read.

Qt-free; the table model (event_table_model.py) owns one and tells it the snapshot (filter, head, row count).
A page is read by key from a cached neighbour (an exactly placed one first) or from the page keys (anchors:
every PAGE-th row's seq, counted on a worker after a filter change), fast at any depth. Until the keys arrive, a
page far from both ends would need an OFFSET that walks every row above it (~0.2 s per 500k rows); it is read by
an estimated key instead, the seq interpolated between the nearest rows whose seq is known, and marked
approximate: its rows may sit a little off their true row numbers. When the keys arrive the approximate pages
are dropped and read again exactly (`settle`); the model moves its persistent indexes meanwhile.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final

from tenant_events.errors import StorageError
from tenant_events.values.events import EventFilter, StoredEvent
from tenant_events.view.tenant_reader import TenantReader

PAGE: Final = 256
MAX_PAGES: Final = 24
EXACT_OFFSET_ROWS: Final = 8 * PAGE  # an OFFSET this deep costs a few ms: exact; deeper ones are estimated
EXACT_TAIL_ROWS: Final = 4 * PAGE  # the last rows: read oldest first from the end, exact


class PageCache:
    """Pages of the snapshot `seq <= head` of `flt` with `rows` matching rows (`counting`: rows is provisional)."""

    def __init__(self) -> None:
        self.reader: TenantReader | None = None
        self.flt = EventFilter()
        self.head = 0
        self.rows = 0
        self.counting = False
        self.pages: OrderedDict[int, list[StoredEvent]] = OrderedDict()
        self.approx: set[int] = set()  # cached pages placed by an estimated key
        self.anchors: list[int] = []  # seq of row k·PAGE in the anchors' snapshot
        self.anchor_shift = 0  # rows inserted at the top since that snapshot
        self._oldest: int | None = None  # seq of the oldest matching row, once asked for
        self.on_page: Callable[[list[StoredEvent]], None] | None = None  # every page read (page_names.py)

    def reset(self, reader: TenantReader | None, flt: EventFilter, head: int) -> None:
        """A new snapshot: nothing cached, no keys."""
        self.reader, self.flt, self.head = reader, flt, head
        self.pages.clear()
        self.approx.clear()
        self.anchors, self.anchor_shift, self._oldest = [], 0, None

    def warm_oldest(self, seq: int) -> None:
        """The oldest matching row's seq, read on a worker with the first page: the first estimated jump
        needs it and would read it on the UI thread otherwise."""
        self._oldest = seq

    def shifted(self, head: int, added: int) -> None:
        """`added` rows arrived on top (up to `head`): every row number moved; the keys stay valid."""
        self.head, self.rows = head, self.rows + added
        self.anchor_shift += added
        self.pages.clear()
        self.approx.clear()

    def event(self, row: int) -> StoredEvent | None:
        if self.reader is None or not 0 <= row < self.rows:
            return None
        number, within = divmod(row, PAGE)
        page = self.pages.get(number)
        if page is None:
            try:
                page, approximate = self._fetch(number)
            except StorageError:  # the database being opened again: blank until painted again, nothing cached
                return None
            self._keep(number, page, approximate)
        else:
            self.pages.move_to_end(number)
        return page[within] if within < len(page) else None

    def _keep(self, number: int, page: list[StoredEvent], approximate: bool) -> None:
        self.pages[number] = page
        if self.on_page is not None:
            self.on_page(page)
        if approximate:
            self.approx.add(number)
        else:
            self.approx.discard(number)
        while len(self.pages) > MAX_PAGES:
            self.approx.discard(self.pages.popitem(last=False)[0])

    def _fetch(self, number: int) -> tuple[list[StoredEvent], bool]:
        """Page `number` and whether it is placed by estimate."""
        assert self.reader is not None
        flt, head, approx = self.flt, self.head, self.approx
        before, after = self.pages.get(number - 1), self.pages.get(number + 1)
        if before and len(before) == PAGE and (number - 1 not in approx or not after or number + 1 in approx):
            return self.reader.older(flt, before[-1].seq, PAGE), number - 1 in approx
        if after:
            return self.reader.newer(flt, after[0].seq, head, PAGE), number + 1 in approx
        start = number * PAGE - self.anchor_shift  # the page's first row in the anchors' snapshot
        if self.anchors and start >= 0 and start // PAGE < len(self.anchors):
            k = start // PAGE
            skip = start - k * PAGE  # rows from anchor k to the page (0 until rows arrive on top)
            return self.reader.older(flt, self.anchors[k] + 1, skip + PAGE)[skip:], False
        offset = number * PAGE
        if offset <= EXACT_OFFSET_ROWS or self.counting:
            return self.reader.page(flt, head, offset, PAGE), False
        to_end = self.rows - offset
        if to_end <= EXACT_TAIL_ROWS:  # from the oldest match when known: a scan from seq 0 can be long
            return self.reader.newer(flt, max(0, (self._oldest or 1) - 1), head, to_end)[:PAGE], False
        rows = self.reader.older(flt, self._estimate_seq(offset) + 1, PAGE)
        if len(rows) < PAGE:  # the estimate fell too near the end: the last rows are the best guess
            rows = self.reader.newer(flt, 0, head, PAGE)
        return rows, True

    def _estimate_seq(self, row: int) -> int:
        """The seq row `row` probably has: interpolated between the nearest rows whose seq is known (the ends of
        exactly placed pages, the newest and the oldest matching row)."""
        assert self.reader is not None
        if self._oldest is None:
            oldest = self.reader.newer(self.flt, 0, self.head, 1)
            self._oldest = oldest[0].seq if oldest else 0
        known = [(0, self.head), (self.rows - 1, self._oldest)]
        for number, page in self.pages.items():
            if number not in self.approx and page:
                known += [(number * PAGE, page[0].seq), (number * PAGE + len(page) - 1, page[-1].seq)]
        above = max((k for k in known if k[0] <= row), default=known[0])
        below = min((k for k in known if k[0] >= row), default=known[1])
        if below[0] == above[0]:
            return above[1]
        return round(above[1] - (row - above[0]) * (above[1] - below[1]) / (below[0] - above[0]))

    def estimated_seq_at(self, row: int) -> int | None:
        """The seq shown at `row` if it sits on an approximate page (None otherwise)."""
        number, within = divmod(row, PAGE)
        page = self.pages.get(number)
        return page[within].seq if number in self.approx and page and within < len(page) else None

    def settle(self) -> None:
        """Forget the approximate pages: read again, they are placed by the keys (or exactly by position)."""
        for number in self.approx:
            self.pages.pop(number, None)
        self.approx.clear()

    def exact_row(self, seq: int) -> int | None:
        """The true row of `seq` (None if it does not match): from the nearest key above it, else by count."""
        assert self.reader is not None
        if not self.anchors or seq > self.anchors[0]:
            newer = self.reader.count(self.flt, self.head, min_seq=seq + 1)
            return newer if newer < self.rows else None
        low, high = 0, len(self.anchors) - 1  # anchors run newest first: the last k with anchors[k] >= seq
        while low < high:
            mid = (low + high + 1) // 2
            if self.anchors[mid] >= seq:
                low = mid
            else:
                high = mid - 1
        rows = self.reader.older(self.flt, self.anchors[low] + 1, PAGE)
        found = next((i for i, e in enumerate(rows) if e.seq == seq), None)
        return None if found is None else low * PAGE + found + self.anchor_shift

    def place(self, row: int, seq: int) -> None:
        """`seq` is known (by count) to be at `row` if it matches: make the page around it exact."""
        assert self.reader is not None
        number = row // PAGE
        if number not in self.approx and number in self.pages:
            return
        self.keep_found(row, page_around(self.reader, self.flt, self.head, row, seq))

    def keep_found(self, row: int, page: list[StoredEvent] | None) -> None:
        """The exact page around `row` (None: its event is filtered out; the page is read again when shown)."""
        number = row // PAGE
        for n in (number - 1, number, number + 1):  # estimated neighbours may overlap the exact page
            if n in self.approx:
                self.approx.discard(n)
                self.pages.pop(n, None)
        if page is not None:
            self._keep(number, page, False)


# the row of an event (its newer matches), the exact page around it
Found = tuple[int, list[StoredEvent] | None]


def page_around(
    reader: TenantReader, flt: EventFilter, head: int, row: int, seq: int
) -> list[StoredEvent] | None:
    """The page holding `row` when event `seq` is there (None when `seq` does not match `flt`)."""
    within = row % PAGE
    at = reader.older(flt, seq + 1, PAGE - within)
    if not at or at[0].seq != seq:
        return None
    return reader.newer(flt, seq, head, within) + at


def find(reader: TenantReader, flt: EventFilter, head: int, seq: int) -> Found:
    """On a worker: the row event `seq` sits at in the snapshot `seq <= head` of `flt`, and the exact page around
    it. Over a year's archive the count of its newer matches takes 0.1-4 s: never on the UI thread."""
    newer = reader.count(flt, head, min_seq=seq + 1)
    return newer, page_around(reader, flt, head, newer, seq)


KEPT_HEADS: Final = (
    256  # heads a worker's count may still be for (gaps, page keys); older counts are made again
)


class RecentHeads(dict[int, int]):
    """head → the rows added on top before it, for counts a worker made for that head; only the last KEPT_HEADS
    are kept (a filter that matches none of a long session's batches moves the head on every batch)."""

    def __setitem__(self, head: int, added: int) -> None:
        super().__setitem__(head, added)
        while len(self) > KEPT_HEADS:
            del self[next(iter(self))]
