"""The rows one commit made visible: the one place that turns the store's commits into seq ranges.

    StoreWriter commit ─▶ CommitResult(first_seq, last_seq, inserted) ─▶ RowRanges.advance ─▶ CommittedRows

Every consumer reads the same range: the window's table (new head), the desktop notifier (rows to offer once)
and `stream --jsonl` (rows to print). A seq inside the range may have no row (a skipped duplicate uses one up,
store/records.py), so readers select by `after_seq < seq <= last_seq` and never count on the range being full.
"""

from __future__ import annotations

from dataclasses import dataclass

from tenant_events.store import CommitResult


@dataclass(frozen=True, slots=True)
class CommittedRows:
    """Rows `after_seq + 1 … last_seq` of `tenant` are new since the previous notification; `inserted` of them."""

    tenant: str
    after_seq: int
    last_seq: int
    inserted: int

    @property
    def first_seq(self) -> int:
        return self.after_seq + 1

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, int) and self.after_seq < seq <= self.last_seq


class RowRanges:
    """The watermark of rows already announced for one tenant; ranges never overlap and never skip a row.

    Commits arrive in order on the loop's thread (one writer thread per database), so the previous range's end
    is where the next begins. The first commit seeds the watermark just before its own first row.
    """

    def __init__(self, tenant: str) -> None:
        self.tenant = tenant
        self.upto: int | None = None  # every row up to this seq was announced

    def advance(self, result: CommitResult) -> CommittedRows | None:
        """The range a commit adds, or None when it stored no row (duplicates, rejects, a cursor move)."""
        if result.first_seq is None:
            return None
        last = result.last_seq if result.last_seq is not None else result.first_seq
        after = self.upto if self.upto is not None else result.first_seq - 1
        if last <= after:
            return None
        self.upto = last
        return CommittedRows(self.tenant, after, last, result.inserted)
