"""The log file (proving ground): private from its first byte and after every rotation, and an unwritable log dir
(read-only or full data dir) costs the file log only — the app still starts and says why."""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat

import pytest

from tenant_events.logs import setup_logging


@pytest.fixture(autouse=True)
def _restore_logging():
    yield
    setup_logging(None, stderr=False)


@pytest.mark.expect_warning_logs
def test_the_log_and_its_rotations_are_0600_whatever_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        setup_logging(tmp_path / "logs", stderr=False)
        handler = next(
            h
            for h in logging.getLogger().handlers
            if getattr(h, "_tenant_events", False) and isinstance(h, logging.handlers.RotatingFileHandler)
        )
        handler.maxBytes = 2000  # type: ignore[attr-defined]
        for i in range(200):
            logging.getLogger("proving").warning("line %d %s", i, "x" * 40)
    finally:
        os.umask(old)
    files = sorted((tmp_path / "logs").iterdir())
    assert len(files) >= 3, files  # it did rotate
    assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {"0o600"}, files


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a 0500 directory; see test_disk_faults")
def test_an_unwritable_log_dir_is_reported_not_fatal(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir(mode=0o500)
    setup_logging(logs, stderr=False)
    logging.getLogger("proving").warning("still running")
    assert "cannot write the log in" in capsys.readouterr().err
