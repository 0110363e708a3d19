"""The silence dialog says what it silences in the alert's terms — "(every group)" only for a rule that groups —
and is wide enough for its title and its comment's hint."""

from __future__ import annotations

import dataclasses

import pytest

from helpers.deliveries import alert_write, store_alerts
from helpers.fixtures_ui import QT_OFFSCREEN_NOISE
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.paths import AppPaths
from tenant_events.store.alerts_inbox import AlertInbox
from tenant_events.tenant.silences import Silences
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.alerts.quiet_actions import QuietActions
from tenant_events.values.alerts import StoredAlert

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]


def _alert(tmp_path, rule_name: str, group_key: str) -> StoredAlert:
    """The alert as the store gives it back."""
    db = tmp_path / "acme.sqlite3"
    store_alerts(db, [dataclasses.replace(alert_write(), rule_name=rule_name, group_key=group_key)])
    with AlertInbox(db) as inbox:
        [alert] = inbox.alerts()
    return alert


@pytest.mark.parametrize(
    ("rule_name", "group", "said"),
    [
        ("Mass deletion", "", "Mass deletion · acme"),
        (
            "Mass deletion by one actor · client Backoffice Script",
            "cli_BACKOFFICE",
            "Mass deletion by one actor (every group) · acme",
        ),
    ],
)
def test_the_dialog_says_what_it_silences(qtbot, tmp_path, rule_name, group, said):
    paths = AppPaths.resolve(str(tmp_path))
    quiet = QuietActions(paths, Silences(paths, secrets=MemorySecretStore))
    assert quiet.silence(InboxEntry("acme", _alert(tmp_path, rule_name, group)), "rule", 0) is None
    dialog = quiet.dialog
    assert dialog is not None
    qtbot.addWidget(dialog)
    assert dialog.what.text() == said
    hint = dialog.comment.placeholderText()
    assert dialog.comment.width() >= dialog.comment.fontMetrics().horizontalAdvance(hint)
    dialog.reject()
