"""PySide6 reads the source of every module imported after it, to see whether it says "PySide6" (its
`__feature__` switch, shibokensupport/feature.py `_mod_uses_pyside`). It reads through `inspect.getsource`, which
keeps every line of every file in `linecache` for the life of the process: about 8 MB of text in some 600 files
for this app, 20 MB of RSS that nothing ever reads again. `scan_without_keeping` puts a check in its place that
gives the same answer and keeps nothing. Imports PySide6 only to reach that module.
"""

from __future__ import annotations

import linecache
import sys
from types import ModuleType


def uses_pyside(module: ModuleType) -> bool:
    """The same answer as PySide6's check: does the module's source contain "PySide6"? False without source."""
    path = getattr(module, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        try:
            with open(path, "rb") as source:
                return b"PySide6" in source.read()
        except OSError:
            return False
    loader = getattr(module, "__loader__", None)
    get_source = getattr(loader, "get_source", None)
    if get_source is None:
        return False
    try:
        text = get_source(module.__name__)
    except (ImportError, OSError, SyntaxError, AttributeError):
        return False
    return isinstance(text, str) and "PySide6" in text


def scan_without_keeping() -> bool:
    """Replace PySide6's source check and drop the lines it kept so far; False if its module is not there."""
    import PySide6.QtCore  # noqa: F401 - loads shibokensupport.feature

    feature = sys.modules.get("shibokensupport.feature")
    if feature is None or not hasattr(feature, "_mod_uses_pyside"):
        return False
    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010 - a private name mypy cannot see
    linecache.clearcache()
    return True
