"""The alert rules of one tenant link: built from the settings, run after every commit, observed by the front ends.

    settings.alerts ─▶ build_evaluator (a bad rule: BadRules, exit 3 on the command line) ─▶ the rules in effect
    TenantMonitor.on_commit ─▶ EvaluatorProcess (alerts/evaluator_process.py: the rules evaluate in a process of
                               their own, on the committed rows) ─▶ StepResult ─▶ every `on_alerts` observer

A link may start several monitors in its life (sign out and in again); the first start attaches the process,
which follows the same database from then on, and the observers stay with the link. The app raises desktop notifications from the observers,
`stream --alerts-jsonl` writes lines from them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts.evaluator import Evaluator, StepResult
from tenant_events.alerts.evaluator_process import EvaluatorProcess, attach
from tenant_events.alerts.from_settings import build_evaluator
from tenant_events.monitor import TenantMonitor
from tenant_events.store.team_state import TeamState

log = logging.getLogger(__name__)


class AlertRules:
    """One tenant's rules; `on_alerts` observers get each evaluation step that raised or updated alerts."""

    def __init__(
        self,
        tenant: str,
        settings: AlertSettings,
        observers: list[Callable[[StepResult], None]],
        *,
        strict: bool = True,
        by_received: bool = False,
    ) -> None:
        """`strict`: BadRules when a rule is invalid (the command line); otherwise the valid rules run.
        `by_received`: an event's age is judged at its received time, not at evaluation (alerts/rule_engine.py)."""
        self.tenant = tenant
        self.by_received = by_received
        # the rules in effect, checked here (strict: a bad rule is refused before anything starts); the
        # evaluator process builds the same from the same settings
        self.evaluator: Evaluator = build_evaluator(settings, tenant, strict=strict, by_received=by_received)
        self._settings = settings
        self.on_alerts = observers
        self.runner: EvaluatorProcess | None = None
        self.resume: TeamState | None = (
            None  # a team relay's evaluation to go on from (tenant/team_alerts.py)
        )

    @property
    def watermark(self) -> int | None:
        """The last seq the rules have evaluated, as the evaluator process last said (None before)."""
        return self.runner.watermark if self.runner is not None else None

    def renotify(self, rule_id: str) -> bool:
        """The rule's choice whether its warning alerts are said again at each firing (values/alert_lifecycle.py)."""
        return next((c.rule.renotify for c in self.evaluator.engine.compiled if c.id == rule_id), True)

    def replace(self, settings: AlertSettings, *, strict: bool = True) -> None:
        """Run new rules from the next step on (the rules editor saved). A fresh evaluator reloads its state
        from the store first, so what the old rules raised stays raised once."""
        self.evaluator = build_evaluator(settings, self.tenant, strict=strict, by_received=self.by_received)
        self._settings = settings
        if self.runner is not None:
            self.runner.replace_rules(settings.model_dump_json())

    def attach(self, monitor: TenantMonitor) -> EvaluatorProcess:
        """Evaluate `monitor`'s commits (call once it started); the last commits are evaluated before it closes."""
        runner = attach(
            monitor,
            self.tenant,
            self._settings.model_dump_json(),
            by_received=self.by_received,
            resume=self.resume,
        )
        self.resume = None
        runner.on_alerts.append(self._forward)
        self.runner = runner
        return runner

    async def detach(self) -> None:
        """Stop evaluating the monitor's commits (the team's relay evaluates from now on); returns once a step in
        flight has completed, so nothing this computer's rules raise is stored after it."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()
            await runner.idle()

    def _forward(self, result: StepResult) -> None:
        for observer in list(self.on_alerts):
            try:
                observer(result)
            except Exception:
                log.exception("an alert observer failed")
