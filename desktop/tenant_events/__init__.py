"""Tenant Events: follow an identity tenant's event stream from the tray or the terminal."""

import sys
import types

__version__ = "0.1.0"
APP_NAME = "Tenant Events"
APP_ID = "io.github.tenantevents.TenantEvents"


def _without_httpx_command_line() -> None:
    """httpx imports its own command-line tool whenever click, rich and pygments are installed, as they are
    beside the test and build tools: about 55 ms of every start, for a tool Tenant Events never runs. A stand-in
    module under its name keeps that import out (nothing else changes: the library's API does not use it)."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main")

    def main() -> None:
        raise SystemExit("the httpx command line is not part of Tenant Events")

    setattr(stand_in, "main", main)  # noqa: B010 (a module built at run time)
    sys.modules["httpx._main"] = stand_in


_without_httpx_command_line()
