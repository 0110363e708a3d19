"""The settings file shared by the running app and the command line.

The app holds the settings in memory and writes the whole document whenever the user changes something; a
command (`rules import`, `destinations add`, `login`) may have written the file in between. Written as it was,
the app's copy would undo that command without a word. So the app remembers the document as it last read or
wrote it (the base), and a save folds both sides' changes together:

  * a value only one side changed takes that side's value;
  * objects are merged key by key, and lists of named things entry by entry (tenants, hubs and destinations
    by `name`, alert rules by `id`);
  * an entry one side removed and the other left alone is removed; one side removed and the other edited is kept;
  * where both changed the same value differently, this process's change wins (it is the newer one);
  * when the two cannot stand together (a profile name both sides gave to different tenants), or the file is
    damaged or from a newer app, the file is moved to `settings.json.kept-<time>` as it was and this process's
    document written in its place: never dropped, never written over.

A command changes the file through `edited_settings` (the same folding, from what it read at its start: a
`login` waits on the network, an import reads files). `refresh` takes in what others saved without writing:
the app looks each second whether the file changed (`changed`, one stat) and before it opens the Settings
dialog.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from tenant_events.paths import AppPaths
from tenant_events.settings.document import SCHEMA_VERSION, Settings
from tenant_events.settings.settings_file import (
    Unusable,
    held_lock,
    load_settings,
    migrated,
    read_document,
    save_settings,
    validated,
)

log = logging.getLogger(__name__)

_GONE: Final[Any] = object()  # an entry or key one side does not have
_KEYS: Final = ("id", "name")  # what names an entry of a list, in order of preference


def merge(base: Any, mine: Any, theirs: Any) -> Any:
    """Three-way merge of JSON values (see the module docstring); `_GONE` stands for an absent entry."""
    if mine == theirs or theirs == base:
        return mine
    if mine == base:
        return theirs
    if isinstance(mine, dict) and isinstance(theirs, dict):
        before = base if isinstance(base, dict) else {}
        out = {}
        for key in [*mine, *(k for k in theirs if k not in mine)]:
            value = merge(before.get(key, _GONE), mine.get(key, _GONE), theirs.get(key, _GONE))
            if value is not _GONE:
                out[key] = value
        return out
    if isinstance(mine, list) and isinstance(theirs, list):
        earlier = base if isinstance(base, list) else []
        name = _entry_key([*earlier, *mine, *theirs])
        if name is not None:
            return _merge_entries(name, earlier, mine, theirs)
    return theirs if mine is _GONE else mine  # both changed it: ours is newer; an edit outlives a removal


def _entry_key(items: list[Any]) -> str | None:
    """The field every item of these lists is named by, if each name occurs once per list."""
    for key in _KEYS:
        if items and all(isinstance(i, dict) and isinstance(i.get(key), str) for i in items):
            return key
    return None


def _merge_entries(key: str, base: list[Any], mine: list[Any], theirs: list[Any]) -> list[Any]:
    by = [{item[key]: item for item in side} for side in (base, mine, theirs)]
    if any(len(names) != len(side) for names, side in zip(by, (base, mine, theirs), strict=True)):
        return mine  # a name twice: not a list of named things after all
    old, ours, other = by
    out = []
    for name in [*ours, *(n for n in other if n not in ours)]:
        value = merge(old.get(name, _GONE), ours.get(name, _GONE), other.get(name, _GONE))
        if value is not _GONE:
            out.append(value)
    return out


def merged(base: Settings, mine: Settings, theirs: Settings) -> Settings:
    """`mine` with what `theirs` changed since `base` folded in; Unusable when the two cannot stand together
    (e.g. a profile name both sides took for different tenants)."""
    dumps = [s.model_dump(mode="json") for s in (base, mine, theirs)]
    try:
        return validated(merge(*dumps))
    except Unusable as exc:
        raise Unusable(f"what another process saved cannot stand beside this one's ({exc})") from None


Stamp = tuple[int, int, int] | None  # a file's inode, modification time and size; None: not there


def file_stamp(path: Path) -> Stamp:
    """The file's inode, modification time and size (None when it is not there): every save is an atomic
    replace (a new inode), so a change shows however quick the writes."""
    try:
        return stamp_of(path.stat())
    except OSError:
        return None


def stamp_of(found: os.stat_result) -> Stamp:
    return found.st_ino, found.st_mtime_ns, found.st_size


def read_current(paths: AppPaths) -> Settings | None:
    """The settings file as it is now (an older one migrated in memory), None when there is none; Unusable
    when it is damaged or from a newer app (the same checks as at start-up, nothing moved here)."""
    try:
        data = read_document(paths.settings_file)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unusable(f"cannot be read: {exc.strerror}") from None
    version = data.get("schema_version", 0)
    if version > SCHEMA_VERSION:
        raise Unusable(
            f"written by a newer Tenant Events (schema {version}, this app knows {SCHEMA_VERSION})"
        )
    return validated(migrated(data))


class SharedSettings:
    """The app's side of the settings file: what it last read or wrote, to tell others' changes from its own."""

    def __init__(self, paths: AppPaths, notices: list[str] | None = None) -> None:
        self.paths = paths
        self.base = load_settings(paths, notices)
        self.kept_aside: tuple[Path, str] | None = None  # where the last save kept the file it found, and why
        self._seen = self._stamp()

    def _stamp(self) -> Stamp:
        return file_stamp(self.paths.settings_file)

    def changed(self) -> bool:
        """Whether the file was written since this side last read or wrote it."""
        return self._stamp() != self._seen

    def save(self, mine: Settings) -> Settings:
        """Write `mine`, keeping what another process saved since; returns what was written."""
        with held_lock(self.paths.settings_file):
            try:
                theirs = read_current(self.paths)
                written = mine if theirs is None or theirs == self.base else merged(self.base, mine, theirs)
            except Unusable as exc:
                self.kept_aside = self._keep_aside(str(exc)), str(exc)
                written = mine
            ours = save_settings(self.paths, written)  # (a stamp of the path now could be another's file)
        self.base, self._seen = written.model_copy(deep=True), stamp_of(ours)
        return written

    def _keep_aside(self, why: str) -> Path:
        """The file as it is, moved beside the one about to be written."""
        path = self.paths.settings_file
        target = path.with_name(f"{path.name}.kept-{time.strftime('%Y%m%dT%H%M%S')}")
        os.replace(path, target)
        log.warning("the settings file was kept as %s: %s", target, why)
        return target

    def refresh(self, mine: Settings) -> Settings:
        """`mine` with what another process saved since folded in (nothing is written; a file that cannot be
        used, or folded in, is left to the next save, which keeps it aside)."""
        self._seen = self._stamp()
        try:
            theirs = read_current(self.paths)
            if theirs is None or theirs == self.base:
                return mine
            result = merged(self.base, mine, theirs)
        except Unusable:
            return mine
        self.base = theirs
        return result


@contextlib.contextmanager
def edited_settings(paths: AppPaths, notices: list[str] | None = None) -> Iterator[Settings]:
    """The settings to change inside the `with` block, written at its end (not when it raises), keeping what
    another process saved while the change was being made."""
    shared = SharedSettings(paths, notices)
    settings = shared.base.model_copy(deep=True)
    yield settings
    shared.save(settings)
