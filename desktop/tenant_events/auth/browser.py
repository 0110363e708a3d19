"""Opening the system browser, with the host environment restored in a frozen app.

PyInstaller's bootloader points LD_LIBRARY_PATH (and friends) at the bundle and keeps the host's value in
`<NAME>_ORIG`; `xdg-open` and the browser it starts then load our bundled libraries and fail (
pyinstaller#3668, #6334). `host_environment()` undoes that for child processes. The opener only reports
that the OS accepted the request, so callers ALWAYS also show the URL (msal's `auth_uri_callback` pattern).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import webbrowser
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

log = logging.getLogger(__name__)

_BUNDLE_VARS = (
    "LD_LIBRARY_PATH",
    "XDG_DATA_DIRS",
    "QT_PLUGIN_PATH",
    "QML2_IMPORT_PATH",
    "GDK_PIXBUF_MODULE_FILE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "PYTHONPATH",
    "PYTHONHOME",
)


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def host_environment(env: Mapping[str, str] | None = None, frozen: bool | None = None) -> dict[str, str]:
    """`env` with each bundle-pointing variable put back to its `_ORIG` value (or removed if it had none)."""
    env = dict(os.environ if env is None else env)
    if not (is_frozen() if frozen is None else frozen):
        return env
    for name in _BUNDLE_VARS:
        original = env.pop(f"{name}_ORIG", None)
        if original is not None:
            env[name] = original
        elif name in ("LD_LIBRARY_PATH", "QT_PLUGIN_PATH", "QML2_IMPORT_PATH", "PYTHONPATH", "PYTHONHOME"):
            env.pop(name, None)
    return env


@contextmanager
def _host_env_applied() -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(host_environment(saved))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def open_in_browser(url: str) -> bool:
    """Ask the OS to open `url`; True only means the request was accepted, not that a page is showing."""
    if not is_frozen():
        return webbrowser.open(url, new=1, autoraise=True)
    with _host_env_applied():
        return webbrowser.open(url, new=1, autoraise=True)


def open_in_background(url: str) -> None:
    """Open the system browser without waiting for it (the desktop app's opener).

    `webbrowser` may block until the browser exits ($BROWSER commands, a first Firefox window), and the
    loopback listener must keep serving on the caller's loop meanwhile, so the call runs on its own thread.
    """

    def go() -> None:
        if not open_in_browser(url):
            log.warning(
                "could not open the system browser; open the sign-in page yourself (shown in the window)"
            )

    threading.Thread(target=go, name="open-browser", daemon=True).start()
