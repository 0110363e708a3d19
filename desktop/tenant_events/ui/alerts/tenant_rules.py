"""The alert rules one tenant of the app runs: the runner attached to its monitor, rebuilt when rules change.

The app's one attach point (TenantSession._start_monitor calls `attach_rules`); everything else about alerts in
the window reads the store (inbox) or listens to `on_step`. Bad rules never stop a tenant: the valid ones run,
the rest are logged here and shown with their errors in the rules editor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import StepResult
from tenant_events.alerts.from_settings import build_evaluator, rule_set
from tenant_events.alerts.runner import AlertRunner, attach
from tenant_events.monitor import TenantMonitor

log = logging.getLogger(__name__)


def attach_rules(
    monitor: TenantMonitor, settings: AlertSettings, profile: str, on_step: Callable[[StepResult], None]
) -> AlertRunner:
    """Evaluate the settings' rules on `monitor`'s commits (from what is stored but not yet evaluated)."""
    runner = attach(monitor, build_evaluator(settings, profile, strict=False))
    runner.on_alerts.append(on_step)
    _log_errors(settings, profile)
    return runner


def retune(runner: AlertRunner, settings: AlertSettings, profile: str) -> None:
    """Run the rules as they are now; the new evaluator reloads its state (and watermark) from the store, so no
    event is evaluated twice and no alert is raised again."""
    runner.evaluator = build_evaluator(settings, profile, strict=False)
    _log_errors(settings, profile)
    runner.kick()


def _log_errors(settings: AlertSettings, profile: str) -> None:
    for error in rule_set(settings).errors:
        log.warning("%s: %s (the rule does not run; fix it in Settings → Alert rules)", profile, error)
