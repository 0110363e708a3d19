"""The CPU the archive writer's field rows take per event (docs/archive.md "Field words"): today's
`FieldRows.add` (its values checked against the JSON and filed in C) against the Python it replaced (the
check `spelled_values`, then `FieldRows.add`), read from git at `--before`, both over the same records of the
same simulator events as bench/archive.py makes, alternately, in this process. Every run is listed.

    .venv/bin/python bench/field_rows.py --events 100000 --runs 4
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from archive import rows_of_month

_BEFORE = "03f8ec74"  # the last commit whose field rows were made in Python
_SOURCE = "desktop/tenant_events/store/archive_fields.py"


def _module_at(rev: str) -> ModuleType:
    """archive_fields.py as it was at `rev`, loaded beside today's."""
    text = subprocess.run(
        ["git", "show", f"{rev}:{_SOURCE}"],
        cwd=Path(__file__).parent.parent,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    with tempfile.TemporaryDirectory(prefix="field-rows-") as folder:
        path = Path(folder) / "field_rows_before.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location("field_rows_before", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=4, help="runs of each, alternately")
    parser.add_argument("--before", default=_BEFORE, help="the git revision of the Python field rows")
    args = parser.parse_args(argv)
    from tenant_events.store import archive_build as ab
    from tenant_events.store.archive_fields import FieldRows
    from tenant_events.store.archive_layout import FIELD_COLUMNS

    before = _module_at(args.before)
    rows = sorted(rows_of_month(7, 1, args.events, 1_700_000_000.0, 30 * 86400.0), key=ab._seq)
    records = [ab._record(r, r[9] or "")[0] for r in rows]
    events: list[tuple[Any, str, list[Any]]] = [
        (rec["seq"], str(rec["raw"]), [rec[c] for _n, c in FIELD_COLUMNS]) for rec in records
    ]

    def python() -> None:
        fields = before.FieldRows()
        for seq, raw, values in events:
            fields.add(seq, values, before.spelled_values(raw, values))

    def c() -> None:
        add = FieldRows().add
        for seq, raw, values in events:
            add(seq, raw, values)

    ways: list[tuple[str, Callable[[], None]]] = [("python", python), ("c", c)]
    gc.disable()  # as the writer runs (archive_build.collector_paused)
    print(f"{args.events} events, µs of CPU an event")
    for run in range(args.runs):
        for name, way in ways if run % 2 == 0 else ways[::-1]:
            start = time.process_time()
            way()
            print(
                f"run {run} {name:>6}: {(time.process_time() - start) / args.events * 1e6:6.2f}", flush=True
            )


if __name__ == "__main__":
    main()
