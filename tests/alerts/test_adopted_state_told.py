"""A relay taking over adopts the team's evaluation state: the step that adopts it tells the observers (its
recent alerts are queued for delivery again), so the delivery worker looks at once instead of at its next idle
poll — the rest of a takeover's alerts go out within moments, not up to half a minute later."""

from __future__ import annotations

import sqlite3
import time

from helpers.events_factory import row
from helpers.stored_alerts import stored_alert
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.store import Batch, StoreWriter
from tenant_events.store.team_state import CarriedAlert, TeamState


def _unrouted(db) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM alert_outbox WHERE routed = 0").fetchone()[0])
    finally:
        conn.close()


def test_the_step_that_adopts_the_teams_state_has_something_for_the_observers(tmp_path):
    db = tmp_path / "acme-team.sqlite3"
    writer = StoreWriter(db)
    try:
        writer.commit_sync(Batch(events=[row(i) for i in range(3)], cursor="c"))
        conn = sqlite3.connect(db)
        try:
            (first_id, first_ms), (last_id, last_ms) = conn.execute(
                "SELECT event_id, time_ms FROM events WHERE seq IN (1, 3) ORDER BY seq"
            ).fetchall()
        finally:
            conn.close()
        now = time.time()
        alert = stored_alert(first_event_id=first_id, raised_at=now, updated_at=now)
        evaluator = build_evaluator(AlertSettings(rules=[{"id": "off-hours", "enabled": False}]), "acme")
        evaluator.resume = TeamState((last_id, last_ms), (CarriedAlert(alert, ((first_ms, first_id),)),))
        result = writer.run_alert_job(evaluator.step).result()
        assert result.changed and result.adopted  # the runner tells on_alerts: the worker is kicked
        assert not result.raised and evaluator.watermark == 3
        assert _unrouted(db) == 1  # the adopted alert's delivery, which the worker now looks at
        assert not writer.run_alert_job(evaluator.step).result().changed  # adopted once
    finally:
        writer.close()
