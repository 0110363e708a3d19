"""Reconnect delays: exponential backoff with full jitter, the server's `retry:` as a floor.

Full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter") spreads many clients that lost the same
server; 0.5 s base and 30 s cap as the vendor CLI does (event-stream.md §8). Any progress resets it.
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
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        """The wait before the next attempt after a failure; grows until `cap`."""
        ceiling = min(self.cap, self.base * (2**self.attempt))
        self.attempt = min(self.attempt + 1, 30)
        return max(self.floor, self.rng.uniform(0.0, ceiling))

    def reset(self) -> None:
        self.attempt = 0
