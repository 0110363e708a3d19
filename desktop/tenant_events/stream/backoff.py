"""Reconnect delays: exponential backoff with jitter, the server's `retry:` as a floor; `bounded()` for any wait.

Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter") spreads many clients that lost the same
server; 0.5 s base and 30 s cap as the vendor CLI does (docs/event-stream.md "Reconnecting"). Progress on a
connection that lived a while resets it (outcomes.py: a connection that ends at once never does, whatever it
delivered).

`busy()` is for 403 "maximum concurrent event stream connections": after a crash or a restart the old
connection still counts at the server until it notices it is gone (its next write fails), so the first retry
comes after a few seconds, never at once (equal jitter: half the ceiling at least), and the wait grows to a
minute only while the connections stay in use.

Every number here may come from a caller's option or a server's header: `bounded()` turns NaN, infinities,
zero and negatives into a finite wait inside a sane range, so no value can make the loop spin or overflow.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Final

MAX_WAIT: Final = 3600.0  # seconds: the longest any single wait may be, whoever asked for it


def bounded(value: float, *, default: float, low: float, high: float = MAX_WAIT) -> float:
    """`value` clamped into [low, high]; `default` when it is not a finite number (NaN, ±inf, not a float)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return default
    if not math.isfinite(number):
        return default
    return min(high, max(low, number))


@dataclass
class Backoff:
    base: float = 0.5
    cap: float = 30.0
    floor: float = 0.0  # from the server's SSE `retry:` field (seconds)
    attempt: int = 0
    least: float = (
        0.0  # each delay is at least this share of its ceiling: 0 = full jitter, 0.5 = equal jitter
    )
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.base = bounded(self.base, default=0.5, low=0.05, high=MAX_WAIT)
        self.cap = bounded(self.cap, default=max(30.0, self.base), low=self.base, high=MAX_WAIT)
        self.least = bounded(self.least, default=0.0, low=0.0, high=1.0)

    @classmethod
    def busy(cls, base: float = 3.0, cap: float = 60.0) -> Backoff:
        """1.5-3 s, 3-6 s, 6-12 s … up to 30-60 s."""
        return cls(base=base, cap=cap, least=0.5)

    def next_delay(self) -> float:
        """The wait before the next attempt after a failure; grows until `cap`."""
        ceiling = min(self.cap, self.base * (2**self.attempt))
        self.attempt = min(self.attempt + 1, 30)
        floor = bounded(self.floor, default=0.0, low=0.0, high=self.cap)
        return max(floor, self.rng.uniform(ceiling * self.least, ceiling))

    def reset(self) -> None:
        self.attempt = 0
