"""A viewer's copy of the team's alerts: a hub payload is checked field by field, stored once per version and
count (and detail), grown in place, and marked as the team's."""

from __future__ import annotations

import pytest

from helpers.deliveries import store_alerts
from helpers.team_alerts import team_payload
from tenant_events.store.team_alert_rows import TeamAlertStore, team_alert_ids
from tenant_events.tenant.team_feed import team_row

PAYLOAD = team_payload("evt_a")


def test_a_team_alert_is_stored_once_grown_in_place_and_marked(tmp_path):
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [])  # a tenant database as the viewer's writer makes it
    with TeamAlertStore(db) as store:
        first = store.store(team_row(PAYLOAD))
        assert first is not None
        alert, new = first
        assert new and alert.rule_name == "Group created (team)" and alert.first_event_id == "evt_a"
        assert store.store(team_row(PAYLOAD)) is None  # the same version and count again: nothing to do
        grown = store.store(
            team_row({**PAYLOAD, "count": 3, "last_event_id": "evt_c", "updated_at": 1.0e9 + 5})
        )
        assert grown is not None and not grown[1] and grown[0].id == alert.id and grown[0].event_count == 3
        # the relay words the same latest event again, with names: the detail alone changes, and only that way
        grown_payload = {**PAYLOAD, "count": 3, "last_event_id": "evt_c", "updated_at": 1.0e9 + 5}
        renamed = store.store(team_row({**grown_payload, "detail": "Admins created by grace@example.com"}))
        assert renamed is not None and renamed[0].detail == "Admins created by grace@example.com"
        assert renamed[0].event_count == 3 and renamed[0].read_at is None
        older = {**PAYLOAD, "count": 2, "last_event_id": "evt_b", "detail": "an older word"}
        assert store.store(team_row(older)) is None  # an older version of it changes nothing
        assert (
            store.store(team_row({**grown_payload, "detail": "Admins created by grace@example.com"})) is None
        )
    assert team_alert_ids(db) == {alert.id}


@pytest.mark.parametrize(
    "bad",
    [{"severity": "urgent"}, {"version": "one"}, {"count": None}, {"types": {"group.created": "x"}}],
)
def test_a_payload_that_is_not_a_team_alert_is_refused_naming_why(bad):
    with pytest.raises(ValueError, match="not a team alert"):
        team_row({**PAYLOAD, **bad})
    missing = dict(PAYLOAD)
    del missing["first_event_id"]
    with pytest.raises(ValueError, match="first_event_id"):
        team_row(missing)
