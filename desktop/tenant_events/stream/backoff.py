"""Reconnect delays: exponential backoff with jitter, the server's `retry:` as a floor.

Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter") spreads many clients that lost the same
server; 0.5 s base and 30 s cap as the vendor CLI does (docs/event-stream.md "Reconnecting"). Any progress resets it.

`busy()` is for 403 "maximum concurrent event stream connections": after a crash or a restart the old
connection still counts at the server until it notices it is gone (its next write fails), so the first retry
comes after a few seconds, never at once (equal jitter: half the ceiling at least), and the wait grows to a
minute only while the connections stay in use.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


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

    @classmethod
    def busy(cls, base: float = 3.0, cap: float = 60.0) -> Backoff:
        """1.5-3 s, 3-6 s, 6-12 s … up to 30-60 s."""
        return cls(base=base, cap=cap, least=0.5)

    def next_delay(self) -> float:
        """The wait before the next attempt after a failure; grows until `cap`."""
        ceiling = min(self.cap, self.base * (2**self.attempt))
        self.attempt = min(self.attempt + 1, 30)
        return max(self.floor, self.rng.uniform(ceiling * self.least, ceiling))

    def reset(self) -> None:
        self.attempt = 0
