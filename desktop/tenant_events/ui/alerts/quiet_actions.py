"""What the inbox's "Quiet this" menu does: a silence kept in the installation's silences file (every window,
`stream` and relay on this machine honours it within a second) and, for a tenant followed through a team hub,
shared with the team first (tenant/silences.py, the one path of every front end); an exception written into the
rule in the settings file (the app takes the change in as it takes a command's, and the rules run with it from
then on).

    NoiseMenu.silence_requested ─▶ silence(): for 1 h / 24 h, or SilenceDialog for "until…" ─▶ Silences.add
    NoiseMenu.exception_requested ─▶ confirm ─▶ alerts/exceptions.py ─▶ edited_settings (a worker thread)
"""

from __future__ import annotations

import asyncio
import getpass
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from tenant_events.alerts.exceptions import group_exception, with_exception
from tenant_events.alerts.from_settings import rule_set
from tenant_events.errors import UserFixableError
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.shared_file import edited_settings
from tenant_events.settings.silences_file import new_silence
from tenant_events.tenant.silences import Silences
from tenant_events.ui.alerts.alert_book import InboxEntry
from tenant_events.ui.alerts.noise_menu import SilenceDialog
from tenant_events.ui.task_set import TaskSet
from tenant_events.values.silences import GROUP_MARK, Silence

log = logging.getLogger(__name__)


def _ask(parent: QWidget | None, question: str) -> bool:
    answer = QMessageBox.question(parent, "Never fire for this — Tenant Events", question)
    return answer == QMessageBox.StandardButton.Yes


class QuietActions(QObject):
    changed = Signal()  # a silence or an exception was made: the inbox shows it
    problem = Signal(str)  # one line for the status bar

    def __init__(self, paths: AppPaths, silences: Silences, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.paths = paths
        self.silences = silences
        self.who = getpass.getuser()
        self.dialog_parent: Callable[[], QWidget | None] = lambda: None
        self.confirm: Callable[[QWidget | None, str], bool] = _ask
        self.dialog: SilenceDialog | None = None
        self._tasks = TaskSet()

    @staticmethod
    def matchers(entry: InboxEntry, scope: str) -> tuple[str, str, str | None]:
        """The silence's matchers for the alert: (rule, tenant, group with "group")."""
        alert = entry.alert
        return alert.rule_id, entry.profile, (alert.group_key if scope == "group" else None)

    def silence(self, entry: InboxEntry, scope: str, seconds: float) -> asyncio.Task[Silence | None] | None:
        """Silence the alert's rule (or group) for `seconds` (the task that keeps it, and shares it with a hub
        tenant's team); 0: ask until when in the dialog (opened, not waited on: `dialog` holds it while it is
        open)."""
        if seconds > 0:
            return self._keep(entry, scope, seconds, "")
        what = self._words(entry, scope)
        dialog = self.dialog = SilenceDialog(what, self.dialog_parent())
        dialog.accepted.connect(
            lambda: self._keep(entry, scope, dialog.seconds(), dialog.comment.text().strip())
        )
        dialog.open()
        return None

    def _words(self, entry: InboxEntry, scope: str) -> str:
        alert = entry.alert
        rule = alert.rule_name.partition(GROUP_MARK)[0]
        if scope == "group":
            return f"{rule} for {alert.rule_name.partition(GROUP_MARK)[2]} · {entry.profile}"
        every = " (every group)" if alert.group_key else ""  # a rule that groups: all its groups
        return f"{rule}{every} · {entry.profile}"

    def _keep(
        self, entry: InboxEntry, scope: str, seconds: float, comment: str
    ) -> asyncio.Task[Silence | None] | None:
        try:
            rule, tenant, group = self.matchers(entry, scope)
            silence = new_silence(
                duration_s=seconds, author=self.who, comment=comment, rule=rule, tenant=tenant, group=group
            )
        except UserFixableError as exc:
            self.problem.emit(f"Could not silence: {exc}")
            return None
        return self._tasks.spawn(self._add(silence))

    async def _add(self, silence: Silence) -> Silence | None:
        try:
            kept = await self.silences.add(silence)
        except (UserFixableError, OSError) as exc:
            self.problem.emit(f"Could not silence: {exc}")
            return None
        log.info("silence %s added: %s", kept.id, kept.matchers_text())
        self.changed.emit()
        return kept

    def never_for(self, entry: InboxEntry) -> asyncio.Task[bool] | None:
        """Add the alert's group as an exception of its rule, once confirmed (the settings file written on a
        worker thread)."""
        rule = rule_set(load_settings(self.paths).alerts).get(entry.alert.rule_id)
        made = group_exception(rule, entry.alert) if rule is not None else None
        if rule is None or made is None:
            self.problem.emit("This alert names no group its rule could leave out")
            return None
        exception, label = made
        question = (
            f"Never fire “{rule.name}” for {label} again? Its alerts for it stay in the inbox; "
            "the exception is listed under Exceptions in Settings ▸ Alert rules, where it can be taken out."
        )
        if not self.confirm(self.dialog_parent(), question):
            return None
        return self._tasks.spawn(self._write(rule.id, exception))

    async def _write(self, rule_id: str, exception: dict[str, object]) -> bool:
        def write() -> None:
            with edited_settings(self.paths) as settings:
                rule = rule_set(settings.alerts).get(rule_id)
                if rule is None:
                    raise ValueError(f"the rule {rule_id!r} is gone")
                settings.alerts.rules = with_exception(settings.alerts.rules, rule, dict(exception))

        try:
            await asyncio.to_thread(write)
        except (UserFixableError, OSError, ValueError) as exc:
            self.problem.emit(f"Could not add the exception: {exc}")
            return False
        self.changed.emit()
        return True
