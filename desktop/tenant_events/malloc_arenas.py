"""How many malloc arenas the desktop app's threads share, and giving their free pages back (glibc only; no Qt).

glibc gives each thread that allocates at once with another an arena of its own, up to eight per core. The app's
worker threads (store reads, aggregates, the writer) each filled one, and what they freed stayed there in pieces
too small to hand back: over 40 MB of "free" heap after an hour of the demo, growing with the RSS. Two arenas
keep the same work in fewer places, so freed memory is used again (bench/window_memory.py measures it). A
MALLOC_ARENA_MAX set in the environment wins.

Even so, one burst (a timeline's events read with their JSON, a query's first page) left ~38 MB free in the
workers' arena, never handed back: glibc returns memory to the system only from the top of a heap, and a live
chunk above the freed ones keeps them. `trim_heap` (glibc's malloc_trim) gives back every free page wherever it
lies; the app calls it once a minute (ui/app/desktop_app.py), a few milliseconds each time.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Final

ARENAS: Final = 2
_M_ARENA_MAX: Final = -8  # glibc's malloc.h


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap the arenas threads created from now on may use; False where that cannot be done (not glibc, or the
    user's MALLOC_ARENA_MAX already says)."""
    if not sys.platform.startswith("linux") or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # another C library (musl has one arena anyway)
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_ARENA_MAX, arenas))


def trim_heap() -> bool:
    """Hand every arena's free pages back to the system; False where there is no glibc to ask."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return bool(trim(0))
