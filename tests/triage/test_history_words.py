"""A reopen reads as one in an alert's triage history, in the inbox and from `tenant-events triage show`."""

from __future__ import annotations

from tenant_events.cli.triage_cmd import _line
from tenant_events.ui.alerts.triage_bar import triage_line
from tenant_events.values.triage import Triage


def test_a_reopen_is_said_as_reopened_and_other_states_as_themselves():
    assert _line("open", "ana", 0.0, None, "").startswith("reopened by ana ")
    assert _line("acknowledged", "ana", 0.0, None, "").startswith("acknowledged by ana ")
    assert triage_line(Triage(alert_id=1, state="open", by="root", at=0.0)).startswith("reopened by root ")
