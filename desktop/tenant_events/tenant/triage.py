"""Triage of a tenant's alerts (acknowledge, snooze until, resolve with a note), handed to ui/ and cli/."""

from tenant_events.store.alert_triage import NOTE_MAX, TRIAGE_STATES, AlertTriage, Triage, TriageState

__all__ = ["NOTE_MAX", "TRIAGE_STATES", "AlertTriage", "Triage", "TriageState"]
