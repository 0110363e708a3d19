"""The seam between the stream engine and where its batches go: the local store or a team hub.

The engine hands every `Batch` (events, rejected frames, a gap marker, the cursor after them) to a sink and
moves its own cursor only when the sink's future says the batch is kept. `StoreWriter` (store/writer.py) is the
local sink; `HubSink` (hub/publisher.py) publishes to NATS JetStream and keeps the cursor in a key-value bucket.
"""

from __future__ import annotations

import concurrent.futures
from typing import Protocol

from tenant_events.store.records import Batch, CommitResult, CursorState


class BatchSink(Protocol):
    """Keeps batches in the order submitted; a failed batch fails every batch queued behind it."""

    def submit(self, batch: Batch) -> concurrent.futures.Future[CommitResult]:
        """Queue `batch` now; the future completes once the batch and its cursor are kept."""
        ...

    def cursor_state(self) -> CursorState:
        """The kept resume point (blocking: the engine calls it in a worker thread)."""
        ...

    def duplicates_total(self) -> int:
        """Duplicates dropped so far, for the engine's statistics."""
        ...

    def resume_after_failure(self) -> CursorState:
        """Accept batches again after a failure; returns the kept cursor to resume from (blocking)."""
        ...
