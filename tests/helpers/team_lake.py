"""A team archive's databases and lake as the tests and bench/team_archive.py look at them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from helpers.fixtures_s3 import Bucket, Keys, ObjectStorage
from tenant_events.store import Batch, EventRow, StoreWriter, duck
from tenant_events.store.archive_lake import NoLakeYet, attach
from tenant_events.store.lake_storage import use_keys
from tenant_events.store.team_view import record
from tenant_events.values.team_archive import Lake


@dataclass(frozen=True)
class Files:
    """Where a test's lake keeps its files: a shared folder (no bucket), or a bucket of moto's server."""

    storage: ObjectStorage | None = None
    bucket: Bucket | None = None

    def lake(self, catalog: str, shared: Path) -> Lake:
        if self.bucket is None:
            return Lake(catalog, str(shared))
        assert self.storage is not None
        return Lake(catalog, f"s3://{self.bucket.name}/lake", self.storage.endpoint, "us-east-1", "path")

    def keys(self, role: str) -> Keys | None:
        """The relay's (read and write) or the viewer's (read-only) storage keys; None for a folder."""
        return None if self.bucket is None else (self.bucket.relay if role == "relay" else self.bucket.viewer)

    def parquet_files(self, shared: Path) -> list[str]:
        """The lake's data files where they are kept: in the shared folder, or in the bucket."""
        if self.storage is None or self.bucket is None:
            return sorted(str(p.relative_to(shared)) for p in shared.rglob("*.parquet"))
        return [key for key in self.storage.objects(self.bucket.name) if key.endswith(".parquet")]

    def use(self, lake: Lake, role: str) -> None:
        """This process reads and writes `lake`'s place with `role`'s keys."""
        if self.bucket is not None:
            use_keys(lake, self.keys(role))


def filled_store(path: Path, rows: list[EventRow], lake: Lake | None = None, batch: int = 400) -> Path:
    """A database holding `rows` (indexed), read with `lake` when given."""
    writer = StoreWriter(path)
    try:
        for at in range(0, len(rows), batch):
            writer.commit_sync(Batch(events=rows[at : at + batch]))
        writer.index_all_sync()
        if lake is not None:
            writer.run_archive_job(lambda c: record(c, lake)).result()
    finally:
        writer.close()
    return path


def lake_ids(lake: Lake) -> list[str]:
    """The lake's events in its order (none before the relay made it and its tables)."""
    try:
        alias = attach(lake, read_only=True)
    except NoLakeYet:
        return []
    cur = duck.cursor()
    try:
        rows = cur.execute(f"SELECT event_id FROM {alias}.events ORDER BY seq").fetchall()
    except duckdb.CatalogException:
        return []
    finally:
        cur.close()
    return [str(r[0]) for r in rows]
