"""The app's settings kept in step with the settings file, which commands run in a terminal write too.

    the app's change ──save()──▶ one save at a time: SharedSettings folds in what a command saved ──▶ the file
    each second, the file changed ──follow()──▶ what a command saved is taken in (rules, destinations, tenants)
    the Settings dialog's OK ──from_dialog()──▶ its changes over what the app holds now

Qt-free: the desktop app (ui/app/desktop_app.py) hands in what to do with settings taken in (`take_in(before,
now)`: rules to the links, sessions for new tenants) and where to say that a command's settings were kept aside
(`report(title, text)`); the folding itself is shared_file.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tenant_events.settings.document import Settings
from tenant_events.settings.settings_file import Unusable
from tenant_events.settings.shared_file import SharedSettings, merged


class SettingsSync:
    """Owns the app's copy of the settings; the app reads `settings` and calls `save()` after a change."""

    def __init__(
        self,
        shared: SharedSettings,
        take_in: Callable[[Settings, Settings], None],
        report: Callable[[str, str], None],
    ) -> None:
        self.shared = shared
        self.settings = shared.base.model_copy(deep=True)
        self._take_in, self._report = take_in, report
        self._saving = asyncio.Lock()
        self._dialog_opened: Settings | None = None  # the copy the Settings dialog started from

    async def save(self) -> None:
        """Write the settings as they are when this save's turn comes, keeping what a command saved meanwhile;
        what came in with it is taken in, over any change the app made while the file was written."""
        async with self._saving:
            mine = self.settings.model_copy(deep=True)
            written = await asyncio.to_thread(self.shared.save, mine)
        kept = self.shared.kept_aside
        if kept is not None:
            self.shared.kept_aside = None
            self._report(
                "The settings file was kept aside",
                f"Kept as {kept[0]}, and the app's settings saved in its place. It could not be used as it was: "
                f"{kept[1]}.",
            )
        if written != mine:
            self._adopt(_folded(mine, self.settings, written))

    def follow(self) -> None:
        """What a command saved since the app last read or wrote the file, in use from now on."""
        if not self._saving.locked():  # (a save reads the file itself)
            self._adopt(self.shared.refresh(self.settings))

    def changed(self) -> bool:
        return self.shared.changed()

    def open_dialog(self) -> Settings:
        """The settings the Settings dialog opens on: the file's latest."""
        self.follow()
        self._dialog_opened = self.settings.model_copy(deep=True)
        return self.settings

    def from_dialog(self, edited: Settings) -> Settings:
        """The dialog's OK or Apply: its changes laid over the settings as they are now (a command may have saved
        something while it was open), which become the app's."""
        opened, self._dialog_opened = self._dialog_opened, edited.model_copy(deep=True)
        result = _folded(opened, edited, self.settings) if opened is not None else None
        self.settings = result if result is not None else edited
        return self.settings

    def _adopt(self, fresh: Settings | None) -> None:
        if fresh is None or fresh == self.settings:
            return
        before, self.settings = self.settings, fresh
        self._take_in(before, fresh)


def _folded(base: Settings, mine: Settings, theirs: Settings) -> Settings | None:
    """`merged`, or None when the two cannot stand together (then `mine` stays, and the file keeps theirs)."""
    try:
        return merged(base, mine, theirs)
    except Unusable:
        return None
