"""Once the window shuts down, a commit that still arrives starts no new work: at quit a task reading new rows was
left pending on the loop (a commit came while the window cancelled its tasks, and restarted the head timer)."""

from __future__ import annotations

import pytest

from helpers.entity_stores import write_store
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, run_async

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def test_a_commit_after_shutdown_starts_nothing(qloop, open_window, tmp_path):
    path = tmp_path / "acme.sqlite3"
    write_store(path, 50, seed=3)
    w = open_window(path)
    feed = w.feed
    run_async(qloop, feed.shutdown())
    feed.events_stored("acme")
    feed.schedule_aggregates(now=True)
    assert not feed._head_timer.isActive() and not feed._aggregate_timer.isActive()
    feed._advance_head()
    assert len(feed.tasks) == 0
