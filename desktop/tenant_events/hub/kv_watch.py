"""A watch of a key-value bucket that says rightly where the entries it held at the start end.

nats-py's watcher puts its end marker (None) first when its consumer info says nothing is pending and the client
has read no message yet. On a loaded machine the server has often delivered every entry by then, their messages
still on the way: the marker then comes before all of them, and a reader that stops at it sees an empty bucket.
A relay taking over read the team's evaluation state as no alerts at all (its database then held none of the
team's alerts: nothing to repeat, resolve or version on), and a silences mirror returned before the team's
silences were kept. Here the end is the entry the consumer had nothing pending after (its `delta`), or comes at
once when the consumer, asked itself, has neither delivered nor pending anything (no such key in the bucket).
"""

from __future__ import annotations

import contextlib
from typing import Any

from nats.js.kv import KeyValue


class KeyWatch:
    """`async for entry in watch`: the entries under `keys` (deletes too, with their operation; with `history`
    every revision the bucket keeps, oldest first), then None once every entry the bucket held at the start has
    come, then each change as it is made."""

    def __init__(self, watcher: Any, empty: bool) -> None:
        self._watcher = watcher
        self._end_due = empty  # the end is said next (at once when there was nothing)
        self._ended = False
        self._seen = False

    @classmethod
    async def open(cls, kv: KeyValue, keys: str = ">", *, history: bool = False) -> KeyWatch:
        # (deletes too: the last entry at the start may be one)
        watcher: Any = await kv.watch(keys, include_history=history)
        try:
            info = await watcher._sub.consumer_info()
        except BaseException:
            with contextlib.suppress(Exception):
                await watcher.stop()
            raise
        delivered = info.delivered.consumer_seq if info.delivered is not None else 0
        return cls(watcher, not (delivered or info.num_pending))

    def __aiter__(self) -> KeyWatch:
        return self

    async def __anext__(self) -> KeyValue.Entry | None:
        while True:
            if self._end_due and not self._ended:
                self._ended = True
                return None
            # (StopAsyncIteration once stopped)
            entry: KeyValue.Entry | None = await self._watcher.__anext__()
            if entry is None:
                # nats-py's marker: right only after an entry (it is put when nothing is pending after one)
                if self._seen and not self._ended:
                    self._ended = True
                    return None
                continue
            self._seen = True
            if not self._ended and entry.delta == 0:
                self._end_due = True
            return entry

    async def stop(self) -> None:
        await self._watcher.stop()
