"""`$BROWSER` for subprocess tests: `python browser_cmd.py URL` acts as the user on the simulator's login page."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from helpers.browser import act_as_browser

if __name__ == "__main__":
    act_as_browser(sys.argv[1])
