"""The desktop app caps glibc's malloc arenas: its worker threads share two, so what one frees another reuses
(without the cap each thread kept its own arena's freed pieces and the window's RSS crept up by tens of MB)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ARENAS_AFTER_EIGHT_THREADS = """
import ctypes, os, re, tempfile, threading

def arenas_after_eight_threads() -> int:
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    start, done = threading.Barrier(8), threading.Event()

    def work() -> None:
        start.wait()  # all eight allocate at once, as the app's workers do under load
        blocks = [libc.malloc(4096) for _ in range(2000)]
        done.wait()
        for block in blocks:
            libc.free(block)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    done.set()
    for t in threads:
        t.join()
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    fd, path = tempfile.mkstemp()
    os.close(fd)
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    with open(path) as xml:
        count = len(re.findall(r'<heap nr="', xml.read()))
    os.unlink(path)
    return count
"""
CAPPED = """
import json, sys
from tenant_events.malloc_arenas import limit_malloc_arenas
limited = limit_malloc_arenas() if sys.argv[1] == "cap" else False
print(json.dumps({"limited": limited, "arenas": arenas_after_eight_threads()}))
"""
# `tenant-events gui` up to where it would open the window: the threads run there instead.
GUI = """
import sys
import tenant_events.ui.app.launch as launch
from tenant_events.cli.main import main
launch.run_gui = lambda *_a: print(arenas_after_eight_threads()) or 0
sys.exit(main(["gui", "--data-dir", sys.argv[1]]))
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")


def _run(script: str, *args: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env
    done = subprocess.run(
        [sys.executable, "-c", ARENAS_AFTER_EIGHT_THREADS + script, *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_threads_share_two_arenas_once_capped():
    assert json.loads(_run(CAPPED, "cap")) == {"limited": True, "arenas": 2}
    assert json.loads(_run(CAPPED, "none"))["arenas"] > 2  # the same threads uncapped: the probe sees it


def test_a_users_own_setting_is_left_alone():
    assert json.loads(_run(CAPPED, "cap", MALLOC_ARENA_MAX="4"))["limited"] is False


def test_the_desktop_command_caps_them_before_it_starts_anything(tmp_path):
    assert _run(GUI, str(tmp_path)) == "2"
