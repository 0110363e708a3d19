"""Which table rows the user has not had on screen yet (the "N new" of the title and the pill).

New events are inserted at the top of a newest-first table, so unseen rows start as one block at the top; the
block splits when part of it is scrolled past while the window is not being looked at. Rows are kept as sorted,
disjoint half-open intervals [start, end) of row numbers and shifted as rows are inserted or removed above them:

    arrived(3)        [0,3)                       three new rows at the top
    seen(1, 2)        [0,1) [2,3)                 the user had row 1 on screen
    inserted_at(2, 1) [0,1) [3,4)                 a gap row was inserted at row 2: the rows below move down
"""

from __future__ import annotations


class UnseenRows:
    """Unseen row intervals; every operation is O(intervals), and there are rarely more than a few."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int]] = []

    @property
    def count(self) -> int:
        return sum(end - start for start, end in self._spans)

    @property
    def spans(self) -> list[tuple[int, int]]:
        return list(self._spans)

    def first(self) -> int | None:
        """The top unseen row, or None."""
        return self._spans[0][0] if self._spans else None

    def clear(self) -> None:
        self._spans = []

    def arrived(self, n: int) -> None:
        """`n` new rows were inserted at the top and nobody has seen them yet."""
        if n <= 0:
            return
        self.inserted_at(0, n)
        if self._spans and self._spans[0][0] == n:
            self._spans[0] = (0, self._spans[0][1])
        else:
            self._spans.insert(0, (0, n))

    def inserted_at(self, row: int, n: int) -> None:
        """`n` rows (not new events: e.g. a gap row) were inserted before `row`; rows from `row` on move down."""
        out: list[tuple[int, int]] = []
        for start, end in self._spans:
            if end <= row:
                out.append((start, end))
            elif start >= row:
                out.append((start + n, end + n))
            else:  # the insertion splits this span; the inserted rows themselves are not unseen events
                out += [(start, row), (row + n, end + n)]
        self._spans = out

    def removed_at(self, row: int, n: int) -> None:
        """Rows [row, row+n) were removed; the ones below move up."""
        out: list[tuple[int, int]] = []
        for start, end in self._spans:
            a, b = _shift_out(start, row, n), _shift_out(end, row, n)
            if b > a:
                out.append((a, b))
        self._spans = _merged(out)

    def seen(self, first: int, last: int) -> int:
        """Rows first..last (inclusive) were on screen; returns how many unseen rows that took off."""
        if last < first:
            return 0
        before = self.count
        out: list[tuple[int, int]] = []
        for start, end in self._spans:
            if end <= first or start > last:
                out.append((start, end))
                continue
            if start < first:
                out.append((start, first))
            if end > last + 1:
                out.append((last + 1, end))
        self._spans = out
        return before - self.count


def _shift_out(pos: int, row: int, n: int) -> int:
    """Where boundary `pos` lands after rows [row, row+n) are removed."""
    if pos <= row:
        return pos
    return max(row, pos - n)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
