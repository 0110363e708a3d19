"""How often Python's cycle collector runs in the alert rules' process: seldom, as evaluation makes few cycles.

A catch-up makes objects by the million that reference counting frees young (each chunk's rows, decoded
payloads, records no rule keeps) and keeps some for a while (threshold windows, sequences, novelty sightings,
the objects an update is compared with). At the interpreter's default, a pass over the young objects every 700
allocations, the collector walked each chunk's 5,000 rows several times while they were in use, promoted them,
and the full passes that followed walked everything the rules keep: about a tenth of the process's CPU in a
catch-up (bench/rules_cpu.py). Evaluation itself makes no reference cycles, so a pass every YOUNG_PASS
allocations finds what there is, later; the objects of start-up (modules, models) are moved out of the
collector's sight once (`gc.freeze`), as they live as long as the process.
"""

from __future__ import annotations

import gc
from typing import Final

YOUNG_PASS: Final = 20_000  # allocations (less frees) between passes over the youngest objects
OLDER_PASSES: Final = 10  # passes of a generation between passes of the next older one (the default)


def for_rules() -> None:
    """Set the rules' process's collector: started up, then seldom."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_PASS, OLDER_PASSES, OLDER_PASSES)
