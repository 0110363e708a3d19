"""Shared pieces of the delivery tests: a tenant database with alerts committed the real way (with their outbox
rows), and a worker run until a condition holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.events_factory import row
from helpers.slack import bound
from tenant_events.destinations.registry import make_destination
from tenant_events.destinations.worker import Backoff, DeliveryWorker, Target
from tenant_events.store import AlertWrite, Batch, StoreWriter

FAST = Backoff(base=0.05, cap=0.4)


def alert_write(
    rule_id: str = "mass-deletion", severity: str = "critical", tenant: str = "acme"
) -> AlertWrite:
    return AlertWrite(
        alert_id=None,
        rule_id=rule_id,
        rule_name="Mass deletion",
        severity=severity,
        tenant=tenant,  # type: ignore[arg-type]
        catch_up=False,
        notify=True,
        occurrences=1,
        event_count=25,
        first_seq=1,
        last_seq=2,
        first_event_id="evt_a",
        last_event_id="evt_b",
        first_time="2026-11-01T10:00:00.000Z",
        last_time="2026-11-01T10:00:40.000Z",
        last_time_ms=1_793_527_240_000,
        type_counts={"user.deleted": 25},
        detail="grace@example.com deleted",
        raised_at=time.time(),
        updated_at=time.time(),
        new_seqs=[1, 2],
    )


def store_alerts(db: Path, writes: list[AlertWrite]) -> list[int]:
    """Commit `writes` through the evaluator's ledger (the outbox rows come with them)."""
    writer = StoreWriter(db)
    try:
        if writer.run_alert_job(lambda ledger: ledger.newest_seq()).result() == 0:
            writer.commit_sync(Batch(events=[row(i) for i in range(2)], cursor="c"))
        mark = writer.run_alert_job(lambda ledger: ledger.watermark()).result()
        return writer.run_alert_job(lambda ledger: ledger.commit(writes, mark, 2)).result()
    finally:
        writer.close()


def target(name: str, url: str, **fields: Any) -> Target:
    profile = make_destination(name, url, **fields)
    return Target(profile, url, profile.fingerprint)


def run_worker(
    db: Path,
    targets: dict[str, Target] | Callable[[], dict[str, Target]],
    until: Callable[[], bool],
    timeout: float = 30.0,
    **options: Any,
) -> DeliveryWorker:
    """Run a delivery worker over `db` until `until()` holds (AssertionError after `timeout` s)."""
    options.setdefault("backoff", FAST)
    source = targets if callable(targets) else (lambda: targets)

    async def main() -> DeliveryWorker:
        worker = DeliveryWorker(db, source, **options)
        task = asyncio.create_task(worker.run())
        deadline = time.monotonic() + bound(timeout)
        try:
            while not until():
                if task.done():
                    task.result()
                if time.monotonic() > deadline:
                    raise AssertionError("timed out waiting for the deliveries")
                worker.kick()
                await asyncio.sleep(0.02)
        finally:
            await worker.close()
            await task
        return worker

    return asyncio.run(main())


def free_port() -> int:
    """A port nothing listens on (yet): a receiver that is down, or one started later on it."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
