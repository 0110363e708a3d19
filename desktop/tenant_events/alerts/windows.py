"""Sliding-window thresholds by event time, with burst tracking so one burst fires once.

A window is half-open: an event at time t counts the matching events in (t − window, t]. When it holds at
least `count`, the rule FIRES with every event in that window; from then on the burst goes on as long as each
matching event comes within `window` of the burst's last one (CONTINUE: the event joins the alert, no new
firing). A gap longer than the window ends the burst, and the next crossing is a new firing.

    quiet ──(≥ count in window)──▶ FIRE ──▶ in burst ──(next event within window)──▶ CONTINUE
      ▲                                        │
      └──────────────(gap > window)────────────┘

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

    def __init__(self, count: int, window_ms: int) -> None:
        if count < 1 or window_ms <= 0:
            raise ValueError(f"a threshold needs count >= 1 and a window > 0 (got {count}, {window_ms} ms)")
        self.count = count
        self.window_ms = window_ms
        self._times: list[int] = []
        self._rows: list[EvalRow] = []
        self.burst_last_ms: int | None = None  # time of the newest event of the burst that fired

    def __len__(self) -> int:
        return len(self._rows)

    def offer(self, row: EvalRow) -> tuple[Outcome, list[EvalRow]]:
        """Add a matching event; FIRE with the events of the window that crossed, CONTINUE with `[row]`."""
        t = row.time_ms
        last = self.burst_last_ms
        if last is not None:
            if abs(t - last) <= self.window_ms:
                self.burst_last_ms = max(last, t)
                self._insert(row)
                return Outcome.CONTINUE, [row]
            if t > last:
                self.burst_last_ms = None  # the gap ended the burst
        index = self._insert(row)
        events = self._crossing(index)
        if events is None:
            return Outcome.QUIET, []
        self.burst_last_ms = max(e.time_ms for e in events)
        return Outcome.FIRE, events

    def replay(self, row: EvalRow) -> None:
        """Rebuild state from an event evaluated before a restart: as `offer`, but nothing fires again."""
        self.offer(row)

    def _insert(self, row: EvalRow) -> int:
        t = row.time_ms
        if not self._times or t >= self._times[-1]:
            index = len(self._times)
            self._times.append(t)
            self._rows.append(row)
        else:
            index = bisect.bisect_right(self._times, t)
            self._times.insert(index, t)
            self._rows.insert(index, row)
        horizon = self._times[-1] - 2 * self.window_ms
        if self._times[0] < horizon:
            drop = bisect.bisect_left(self._times, horizon)
            del self._times[:drop], self._rows[:drop]
            index -= drop
        return index

    def _crossing(self, index: int) -> list[EvalRow] | None:
        """The events of the first window ending at or after the new event (and covering it) that holds at
        least `count` events, or None."""
        times, window = self._times, self.window_ms
        t = times[index]
        j = index
        while j < len(times) and times[j] < t + window:
            start = bisect.bisect_right(times, times[j] - window)
            if j - start + 1 >= self.count:
                return self._rows[start : j + 1]
            j += 1
        return None
