"""Sliding-window thresholds by event time, with burst tracking so one burst fires once.

A window is half-open: an event at time t counts the matching events in (t − window, t]. When it holds at
least `count`, the rule FIRES with every event in that window; from then on the burst goes on while events keep
coming at the threshold's rate, each less than window / count after the burst's latest event (CONTINUE: the
event joins the firing, no new firing). The first event that comes later ends the burst (it joins nothing:
routine traffic after an incident is not part of it, though the incident itself still fills the window for a
while), and the next crossing is a new firing. An event belongs to one firing at most: a new crossing needs
`count` events of its own, so no event is behind two firings of one rule and a second incident never re-counts
the first.

    quiet ──(≥ count in window)──▶ FIRE ──▶ in burst ──(within window / count of the burst's last)──▶ CONTINUE
      ▲                                        │
      └──────────────(a slower event)──────────┘

With `distinct`, the window counts distinct values (one per event, given to `offer`) instead of events.

Events may arrive slightly out of time order (the service does not promise order, docs/event-stream.md "Quirks"): a late
event is inserted in time order and the windows ending after it are re-counted. Events older than twice the
window behind the newest are dropped, so memory stays bounded.
"""

from __future__ import annotations

import bisect
import enum

from tenant_events.store.alert_records import EvalRow


class Outcome(enum.Enum):
    QUIET = "quiet"
    FIRE = "fire"
    CONTINUE = "continue"


class BurstWindow:
    """Threshold state of one rule."""

    def __init__(self, count: int, window_ms: int, *, distinct: bool = False) -> None:
        if count < 1 or window_ms <= 0:
            raise ValueError(f"a threshold needs count >= 1 and a window > 0 (got {count}, {window_ms} ms)")
        self.count = count
        self.window_ms = window_ms
        self.distinct = distinct
        self._times: list[int] = []
        self._rows: list[EvalRow] = []
        self._values: list[object] = []  # with `distinct`: each event's value
        self._spent: list[bool] = []  # the event is already behind a firing (or joined its burst)
        self.in_burst = False
        self.burst_last_ms = 0  # event time of the burst's latest event
        self.gap_ms = window_ms / count  # the threshold's rate: a burst goes on while events come this often

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def newest_ms(self) -> int:
        return self._times[-1] if self._times else 0

    def offer(self, row: EvalRow, value: object = None) -> tuple[Outcome, list[EvalRow]]:
        """Add a matching event; FIRE with the events of the window that crossed, CONTINUE with `[row]`."""
        index = self._insert(row, value, spent=False)
        if self.in_burst:
            if row.time_ms - self.burst_last_ms < self.gap_ms:
                self._spent[index] = True
                self.burst_last_ms = max(self.burst_last_ms, row.time_ms)
                return Outcome.CONTINUE, [row]
            self.in_burst = False  # slower than the threshold's rate: the burst is over
        found = self._crossing(index)
        if found is None:
            return Outcome.QUIET, []
        start, end = found
        spent = self._spent
        events = [r for i, r in enumerate(self._rows[start : end + 1], start) if not spent[i]]
        spent[start : end + 1] = [True] * (end + 1 - start)
        self.in_burst = True
        self.burst_last_ms = self._times[end]
        return Outcome.FIRE, events

    def replay(self, row: EvalRow, value: object = None, *, spent: bool) -> None:
        """Rebuild state from an event evaluated before a restart, firing nothing: `spent` says whether the
        store links it to an alert of the rule. A burst was going on if the newest such event was in it."""
        self._insert(row, value, spent=spent)
        self.in_burst = spent
        if spent:
            self.burst_last_ms = max(self.burst_last_ms, row.time_ms)

    def _holds(self, start: int, end: int) -> bool:
        """Whether the events start … end (inclusive) behind no firing yet reach the count."""
        n = end - start + 1
        if n < self.count:
            return False
        spent = self._spent[start : end + 1]
        if n - sum(spent) < self.count:
            return False
        if not self.distinct:
            return True
        values = {v for v, s in zip(self._values[start : end + 1], spent, strict=True) if not s}
        return len(values) >= self.count

    def _insert(self, row: EvalRow, value: object, *, spent: bool) -> int:
        t = row.time_ms
        if not self._times or t >= self._times[-1]:
            index = len(self._times)
            self._times.append(t)
            self._rows.append(row)
            self._spent.append(spent)
            if self.distinct:
                self._values.append(value)
        else:
            index = bisect.bisect_right(self._times, t)
            self._times.insert(index, t)
            self._rows.insert(index, row)
            self._spent.insert(index, spent)
            if self.distinct:
                self._values.insert(index, value)
        horizon = self._times[-1] - 2 * self.window_ms
        if self._times[0] < horizon:
            drop = bisect.bisect_left(self._times, horizon)
            del self._times[:drop], self._rows[:drop], self._values[:drop], self._spent[:drop]
            index -= drop
        return index

    def _crossing(self, index: int) -> tuple[int, int] | None:
        """The first window ending at or after the new event (and covering it) that holds at least `count`
        events behind no firing yet, as (start, end) indexes; or None."""
        times, window = self._times, self.window_ms
        t = times[index]
        j = index
        while j < len(times) and times[j] < t + window:
            start = bisect.bisect_right(times, times[j] - window)
            if self._holds(start, j):
                return start, j
            j += 1
        return None
