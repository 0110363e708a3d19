"""The rules' own connection stops at a database file another program removed: it would go on in a log nobody
else reads (its process then ends without closing it, and its parent starts another)."""

from __future__ import annotations

import pytest

from tenant_events.store import StoreWriter
from tenant_events.store.alert_connection import AlertConnection, FilesGone


def test_a_removed_log_refuses_the_next_step(tmp_path):
    db = tmp_path / "t.sqlite3"
    StoreWriter(db).close()
    rules = AlertConnection(db)  # (its first read makes the -wal and -shm)
    try:
        assert rules.run_alert_job(lambda ledger: ledger.watermark()).result() == 0
        wal = tmp_path / "t.sqlite3-wal"
        assert wal.exists()
        wal.rename(tmp_path / "moved-away")  # another program's doing
        with pytest.raises(FilesGone, match=r"t\.sqlite3-wal is no longer the file"):
            rules.run_alert_job(lambda ledger: ledger.watermark()).result()
    finally:
        rules.close()
