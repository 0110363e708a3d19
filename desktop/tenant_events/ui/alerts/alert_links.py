"""Opening the alert an alert link names (`tenant-events://…`, handed over by the desktop or a later start).

A link made by this app names a profile and the alert's id in its database. A link in a team's delivery names
the tenant's name on the hub and the alert's name there (its rule and first event): each teammate's copy of that
alert has an id of its own, so the alert is found by that name in the hub profile that reads the tenant. When
this app does not have the alert, the inbox opens and a short note says why, rather than nothing happening or
another alert opening.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox

from tenant_events.url_forms import AlertLink

if TYPE_CHECKING:
    from tenant_events.ui.alerts.app_alerts import AppAlerts
    from tenant_events.ui.alerts.inbox_window import InboxWindow


def open_link(alerts: AppAlerts, link: AlertLink) -> InboxWindow:
    """The inbox, open on the alert `link` names, or with a note saying why that alert is not here."""
    if link.team_key:
        profiles = [h.name for h in alerts.settings.hubs if h.hub_tenant == link.tenant]
        entry = alerts.book.team_alert(profiles, link.team_key)
        if entry is not None:
            return alerts.open_inbox(entry.profile, entry.alert.id)
        if profiles:
            why = (
                f"The team's alert has not reached this app yet: it comes from the hub with the events of "
                f"“{link.tenant}”. Open the link again in a moment."
            )
        else:
            why = (
                f"The link opens an alert of “{link.tenant}” on a team hub, which this app does not read. "
                "Connect to the team hub (File ▸ Connect to a team hub) to see the team's alerts."
            )
        return _noted(alerts.open_inbox(), why)
    if alerts.book.get(link.tenant, link.alert_id) is not None:
        return alerts.open_inbox(link.tenant, link.alert_id)
    if link.tenant in alerts.book.profiles:
        why = f"“{link.tenant}” has no alert {link.alert_id} here: the link was made by Tenant Events elsewhere."
    else:
        why = f"This app has no tenant named “{link.tenant}”: the link was made by Tenant Events elsewhere."
    return _noted(alerts.open_inbox(), why)


def _noted(inbox: InboxWindow, why: str) -> InboxWindow:
    note = QMessageBox(QMessageBox.Icon.Information, "Alert not found — Tenant Events", why, parent=inbox)
    note.setObjectName("alert-link-note")
    note.open()  # not modal to the app: the inbox stays usable behind it
    return inbox
