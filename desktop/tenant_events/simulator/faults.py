"""Fault knobs: misbehaviour a client must survive, switched on per run (CLI flags) or live (/_sim/faults).

Counters (`drop_mid_frame`, `stall`, `http_429`, `http_5xx`) apply to that many next /events requests.
`stream_error` and `malformed` are one-shot: the next stream gets them, then they reset. `slow_drip` and
`duplicate_every` stay on until set back to 0. ID-token knobs shape what /oauth/token returns (tokens.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

# In-stream error codes of the live service (docs/event-stream.md "Errors").
STREAM_ERROR_CODES = (
    "invalid_cursor",
    "cursor_expired",
    "timeout",
    "payload_too_large",
    "processing_error",
    "connection_timeout",
)
MALFORMED_KINDS = ("bad_json", "unknown_kind", "bad_envelope", "oversized")


@dataclass
class Faults:
    drop_mid_frame: int = (
        0  # next N streams: cut a frame in half after `fault_after` events, abort the TCP stream
    )
    stall: int = 0  # next N streams: headers, then silence (no heartbeats) until the client gives up
    stream_error: str | None = (
        None  # next stream: this in-stream error code after `fault_after` events, then close
    )
    malformed: str | None = None  # next stream: one malformed message after `fault_after` events, then go on
    fault_after: int = 1
    oversized_bytes: int = 2 * 1024 * 1024
    http_429: int = 0  # next N /events requests: 429 with rate-limit headers
    http_5xx: int = 0  # next N /events requests: `http_5xx_status`
    http_5xx_status: int = 503
    slow_drip: float = 0.0  # seconds between the halves of every frame and between frames
    duplicate_every: int = 0  # after every N events, re-send the previous one (same id and offset)

    def update(self, **knobs: Any) -> None:
        """Set knobs by name; unknown names or bad values raise ValueError naming them."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        for name, value in knobs.items():
            if name not in fields:
                raise ValueError(f"unknown fault knob {name!r}")
            if name == "stream_error" and value not in (None, *STREAM_ERROR_CODES):
                raise ValueError(
                    f"stream_error must be one of {', '.join(STREAM_ERROR_CODES)}; got {value!r}"
                )
            if name == "malformed" and value not in (None, *MALFORMED_KINDS):
                raise ValueError(f"malformed must be one of {', '.join(MALFORMED_KINDS)}; got {value!r}")
            if name in ("slow_drip",) and (not isinstance(value, int | float) or value < 0):
                raise ValueError(f"{name} must be a number >= 0; got {value!r}")
            if name not in ("stream_error", "malformed", "slow_drip") and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"{name} must be an integer >= 0; got {value!r}")
            setattr(self, name, value)

    def take(self, name: str) -> bool:
        """Consume one unit of a counter knob; True if it fired."""
        count = int(getattr(self, name))
        if count > 0:
            setattr(self, name, count - 1)
            return True
        return False

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class StreamPlan:
    """The faults one stream connection will show, taken from `Faults` when it opens."""

    drop: bool = False
    stall: bool = False
    error: str | None = None
    malformed: str | None = None

    @classmethod
    def take(cls, faults: Faults) -> StreamPlan:
        plan = cls(
            drop=faults.take("drop_mid_frame"),
            stall=faults.take("stall"),
            error=faults.stream_error,
            malformed=faults.malformed,
        )
        faults.stream_error = faults.malformed = None
        return plan

    @property
    def any(self) -> bool:
        return self.drop or self.stall or self.error is not None or self.malformed is not None
