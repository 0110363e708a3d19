"""Loaded by every `cli()` subprocess of the test suite (its PYTHONPATH starts here; Python imports
`sitecustomize` at start-up): each exception Python can only print — "Exception ignored in …", an unraisable
exception such as a clean-up run off the event loop — is also appended to the file named by
$TENANT_EVENTS_TEST_UNRAISABLE, and the test that started the process fails on it (helpers/fixtures_engine.py).
In-process, pytest does the same with its own hook; a subprocess would only print it."""

import os
import sys
import traceback

_PATH = os.environ.get("TENANT_EVENTS_TEST_UNRAISABLE")

if _PATH:
    _default_hook = sys.unraisablehook

    def _keep(unraisable: "sys.UnraisableHookArgs") -> None:
        lines = traceback.format_exception(
            unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback
        )
        with open(_PATH, "a", encoding="utf-8") as out:
            out.write(f"Exception ignored in: {unraisable.object!r}\n{''.join(lines)}")
        _default_hook(unraisable)

    sys.unraisablehook = _keep
