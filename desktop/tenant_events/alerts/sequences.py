"""Sequences by event time: one event of each step for the same group within T, in order or in any order.

Events are kept in event-time order (a late one is inserted where it happened), so a sequence completes when its
last-DELIVERED event arrives, whatever order the service delivered them in. A sequence is within T when its
first and last events are less than T apart (half-open, as threshold windows: exactly T apart is not within).
Ordered: step i's event is no later than step i+1's. Once a sequence fires, its events are used up: each event
belongs to at most one firing. Events older than twice T behind the newest are dropped (bounded memory).

    A(assigned) ──── B(removed)            ordered, B − A < T  → FIRE [A, B]
    B ──── A                               ordered            → nothing (B happened first); any order → FIRE
"""

from __future__ import annotations

import bisect
import itertools

from tenant_events.store.alert_records import EvalRow

Entry = tuple[int, int, frozenset[int], EvalRow]  # (time_ms, seq, steps it matches, row)


class SequenceWindow:
    """Sequence state of one rule for one group."""

    __slots__ = ("_entries", "ordered", "steps", "within_ms")

    def __init__(self, steps: int, within_ms: int, *, ordered: bool) -> None:
        if steps < 2 or within_ms <= 0:
            raise ValueError(f"a sequence needs 2 or more steps and T > 0 (got {steps}, {within_ms} ms)")
        self.steps = steps
        self.within_ms = within_ms
        self.ordered = ordered
        self._entries: list[Entry] = []

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def newest_ms(self) -> int:
        return self._entries[-1][0] if self._entries else 0

    def offer(self, row: EvalRow, steps: frozenset[int]) -> list[EvalRow] | None:
        """Add an event matching `steps`; the sequence's events (time order) when it completes one, else None."""
        index = self._insert(row, steps)
        found = self._complete(index)
        if found is None:
            return None
        used = {e[1] for e in found}
        self._entries = [e for e in self._entries if e[1] not in used]
        return [e[3] for e in found]

    def replay(self, row: EvalRow, steps: frozenset[int], *, spent: bool) -> None:
        """Rebuild state from an event evaluated before a restart, firing nothing: an event the store links to
        an alert of the rule (`spent`) is used up; any other one waits for the rest of its sequence again."""
        if not spent:
            self._insert(row, steps)

    def _insert(self, row: EvalRow, steps: frozenset[int]) -> int:
        entry: Entry = (row.time_ms, row.seq, steps, row)
        entries = self._entries
        if not entries or (row.time_ms, row.seq) >= (entries[-1][0], entries[-1][1]):
            index = len(entries)  # (in stored order, as nearly every event comes)
            entries.append(entry)
        else:
            index = bisect.bisect_right(entries, (row.time_ms, row.seq), key=lambda e: (e[0], e[1]))
            entries.insert(index, entry)
        horizon = entries[-1][0] - 2 * self.within_ms
        if entries[0][0] < horizon:
            drop = bisect.bisect_left(entries, horizon, key=lambda e: e[0])
            del entries[:drop]
            index -= drop
        return index

    def _complete(self, index: int) -> list[Entry] | None:
        """A sequence that uses the event at `index`, within T, or None."""
        entries, t, within = self._entries, self._entries[index][0], self.within_ms
        lo = bisect.bisect_right(entries, t - within, key=lambda e: e[0])
        hi = bisect.bisect_left(entries, t + within, key=lambda e: e[0])
        near = entries[lo:hi]
        me = entries[index]
        options = [[e for e in near if i in e[2]] for i in range(self.steps)]
        if any(not o for o in options):
            return None
        for k in sorted(me[2]):
            pools = [[me] if i == k else [e for e in options[i] if e is not me] for i in range(self.steps)]
            best = self._best(pools)
            if best is not None:
                return sorted(best, key=lambda e: (e[0], e[1]))
        return None

    def _best(self, pools: list[list[Entry]]) -> list[Entry] | None:
        """The tightest choice of one entry per step (distinct entries, in step order when ordered) within T."""
        best: list[Entry] | None = None
        best_span = self.within_ms
        limit = 20_000  # choices tried at most: a busy group cannot stall evaluation
        for choice in itertools.islice(itertools.product(*pools), limit):
            if len({e[1] for e in choice}) != len(choice):
                continue
            if self.ordered and any(
                (choice[i][0], choice[i][1]) > (choice[i + 1][0], choice[i + 1][1])
                for i in range(len(choice) - 1)
            ):
                continue
            span = max(e[0] for e in choice) - min(e[0] for e in choice)
            if span < best_span:
                best, best_span = list(choice), span
        return best
