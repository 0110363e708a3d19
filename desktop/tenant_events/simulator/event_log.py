"""The append-only event log: every event stored once, with its SSE frame pre-rendered at append time.

Position n (1-based sequence) has the cursor `cursor.encode(epoch, n)`; a client resuming from it gets event
n + 1 first (docs/event-stream.md "Cursors and resume"). Frames are bytes ready for the wire, so serving a backlog is a join of
slices (the speed target: ≥ 100k events/s). Retention drops the oldest events; a cursor before
them answers 410 (docs/event-stream.md "Errors").
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import random
import string
import time
from collections.abc import Iterable
from typing import Any

import orjson

from tenant_events.simulator import cursor
from tenant_events.simulator.config import TENANT, TENANT_DOMAIN, SimulatorConfig
from tenant_events.simulator.event_types import TYPE_INDEX
from tenant_events.simulator.storage import SimStore
from tenant_events.simulator.world import iso_ms

SOURCE = f"urn:sim:{TENANT_DOMAIN}"  # `urn:<service>:<tenant>.<domain>` (docs/event-stream.md "Envelope")
_REAL_NAMES = (
    (b',"xtenant":', b',"a0tenant":'),
    (b',"xstream":', b',"a0stream":'),
    (b',"xpurpose":', b',"a0purpose":'),
)
_ALNUM = string.ascii_letters + string.digits
_B64_TO_ALNUM = bytes.maketrans(b"+/=", b"xyz")  # base64 of random bytes, kept inside [a-zA-Z0-9]


class CursorExpired(Exception):
    """The cursor is well-formed but points before the retained data (410)."""


def render_frame(event_type: str, offset: str, envelope: bytes) -> bytes:
    """One SSE event frame: `event:` kind, `id:` offset, `data:` `{offset, event}` (docs/event-stream.md "Frames")."""
    off = offset.encode("ascii")
    return b"".join(
        (
            b"event: ",
            event_type.encode("ascii"),
            b"\nid: ",
            off,
            b'\ndata: {"offset":"',
            off,
            b'","event":',
            envelope,
            b"}\n\n",
        )
    )


class EventLog:
    """Events in memory (and in SimStore when persistent); all mutation happens on the server's loop."""

    def __init__(self, config: SimulatorConfig, store: SimStore) -> None:
        self.config = config
        self.store = store
        self._rng = random.Random(f"ids:{config.seed}")
        epoch = store.get("epoch")
        if epoch is None:
            epoch = (
                str(random.SystemRandom().randrange(1, 2**32))
                if store.persistent
                else str(config.seed % 2**32)
            )
            store.put("epoch", epoch)
        self.epoch = int(epoch)
        stream_id = store.get("stream_id")
        if stream_id is None or len(stream_id) != 4 + config.id_length:
            stream_id = "est_" + "".join(self._rng.choices(_ALNUM, k=config.id_length))
            store.put("stream_id", stream_id)
        self.stream_id = stream_id
        self.first_seq = 1
        self.frames: list[bytes] = []
        self.types = bytearray()
        self.times: list[float] = []
        self._changed = asyncio.Event()
        self._pending_rows: list[tuple[int, str, float, bytes]] = []
        self._load()
        self._rng = random.Random(f"ids:{config.seed}:{self.last_seq}")

    # ------------------------------------------------------------------ positions
    @property
    def last_seq(self) -> int:
        return self.first_seq - 1 + len(self.frames)

    def offset(self, seq: int) -> str:
        return cursor.encode(self.epoch, seq)

    def resolve(self, text: str) -> int:
        """The sequence a client's cursor stands for; CursorError (400) or CursorExpired (410)."""
        epoch, seq = cursor.decode(text)
        if epoch != self.epoch:
            raise CursorExpired("cursor from an earlier log")
        if seq > self.last_seq:
            raise cursor.CursorError("beyond the end of the stream")
        if seq < self.first_seq - 1:
            raise CursorExpired("older than retention")
        return seq

    def seq_before_time(self, ts: float) -> int:
        """Position just before the first retained event at or after `ts` (the `from_timestamp` parameter)."""
        return self.first_seq - 1 + bisect.bisect_left(self.times, ts)

    # ------------------------------------------------------------------ appending
    def append(self, event_type: str, data: dict[str, Any], ts: float, *, purpose: str | None = None) -> int:
        """Append one event now; persist it at the next flush; wake waiting streams."""
        seq = self.last_seq + 1
        event_id = self._new_id()
        env: dict[str, Any] = {
            "specversion": "1.0",
            "type": event_type,
            "source": SOURCE,
            "id": event_id,
            "time": iso_ms(ts),
            "data": data,
            "xtenant": TENANT,
            "xstream": self.stream_id,
        }
        if purpose is not None:
            env["xpurpose"] = purpose
        envelope = orjson.dumps(env)
        self._add(seq, event_type, ts, envelope)
        if self.store.persistent:
            self._pending_rows.append((seq, event_type, ts, envelope))
        return seq

    def _new_id(self) -> str:
        """`evt_` + id_length random characters of [a-zA-Z0-9] (docs/event-stream.md "Envelope")."""
        n = self.config.id_length
        raw = base64.b64encode(self._rng.randbytes((n * 3 + 3) // 4)).translate(_B64_TO_ALNUM)
        return "evt_" + raw[:n].decode("ascii")

    def _add(self, seq: int, event_type: str, ts: float, envelope: bytes) -> None:
        if self.config.real_names:
            for neutral, real in _REAL_NAMES:
                envelope = envelope.replace(neutral, real, 1)
        self.frames.append(render_frame(event_type, self.offset(seq), envelope))
        self.types.append(TYPE_INDEX[event_type])
        self.times.append(ts)

    def flush(self) -> None:
        """Write appended events to disk, apply retention, and wake streams (call after a batch)."""
        if self._pending_rows:
            self.store.append_events(self._pending_rows)
            self._pending_rows = []
        keep = self.config.retention
        if keep and len(self.frames) > keep:
            drop = len(self.frames) - keep
            del self.frames[:drop], self.types[:drop], self.times[:drop]
            self.first_seq += drop
            if self.store.persistent:
                self.store.delete_events_before(self.first_seq)
        self._changed.set()
        self._changed = asyncio.Event()

    def _load(self) -> None:
        if not self.store.persistent:
            return
        rows: Iterable[tuple[int, str, float, bytes]] = self.store.iter_events()
        for seq, event_type, ts, envelope in rows:
            if not self.frames:
                self.first_seq = seq
            self._add(seq, event_type, ts, bytes(envelope))

    # ------------------------------------------------------------------ reading
    def frames_after(self, seq: int, mask: bytes | None, max_bytes: int) -> tuple[list[bytes], int]:
        """Frames after `seq` (only types where mask[type] is set), up to ~max_bytes; and the new position."""
        start = seq + 1 - self.first_seq
        if start < 0:
            raise CursorExpired("fell behind retention")
        out: list[bytes] = []
        size = 0
        frames, types, end = self.frames, self.types, len(self.frames)
        i = start
        while i < end and size < max_bytes:
            if mask is None or mask[types[i]]:
                frame = frames[i]
                out.append(frame)
                size += len(frame)
            i += 1
        return out, self.first_seq + i - 1

    async def wait_beyond(self, seq: int, within: float) -> bool:
        """Wait until an event after `seq` exists (True) or `within` seconds pass (False)."""
        if self.last_seq > seq:
            return True
        changed = self._changed
        try:
            await asyncio.wait_for(changed.wait(), within)
        except TimeoutError:
            return self.last_seq > seq
        return True

    def stats(self) -> dict[str, Any]:
        return {
            "events": len(self.frames),
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "latest_offset": self.offset(self.last_seq),
            "epoch": self.epoch,
            "stream_id": self.stream_id,
        }


def now() -> float:
    return time.time()
