"""The proving ground's result: one row per scenario, what makes a row fail, and the table it prints."""

from __future__ import annotations

from dataclasses import dataclass, field

import soak_memory  # bench/, next to this script
from store_disk import WAL_AFTER_STOP, WAL_BOUND, Disk, MiB

FD_SLACK = 2  # the soak's fds at the end may exceed the start by this much (a rotation's sockets in flight)


@dataclass
class Row:
    scenario: str
    rounds: int = 0
    sent: int = 0
    stored: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: bool = False
    rejected: int = 0
    injected: int = 0
    recovery: list[float] = field(default_factory=list)
    memory: soak_memory.Verdict | None = None
    fds: tuple[int, int] | None = None
    disk: Disk | None = None
    wal_max: int | None = None  # bytes, sampled while the CLI ran (soak)

    @property
    def flat(self) -> bool:
        """Handles: at most FD_SLACK more than at the start; memory: soak_memory.Verdict."""
        fds_ok = self.fds is None or self.fds[1] <= self.fds[0] + FD_SLACK
        return fds_ok and (self.memory is None or self.memory.flat)

    @property
    def bounded(self) -> bool:
        """The WAL never passed WAL_BOUND and the last clean stop left at most WAL_AFTER_STOP."""
        return (self.wal_max is None or self.wal_max <= WAL_BOUND) and (
            self.disk is None or self.disk.wal <= WAL_AFTER_STOP
        )

    @property
    def ok(self) -> bool:
        return (
            self.lost == 0 and self.duplicated == 0 and not self.out_of_order and self.flat and self.bounded
        )


def table(rows: list[Row]) -> str:
    head = (
        "scenario",
        "rounds",
        "sent",
        "stored",
        "lost",
        "dup",
        "order",
        "rejected kept/inj",
        "max recovery s",
        "RSS start/warm→end MiB",
        "fds start→end",
        "data/db/FTS MiB",
        "WAL max/stop MiB",
    )
    lines = [head]
    for r in rows:
        lines.append(
            (
                r.scenario,
                str(r.rounds),
                str(r.sent),
                str(r.stored),
                str(r.lost),
                str(r.duplicated),
                "BAD" if r.out_of_order else "ok",
                f"{r.rejected}/{r.injected}",
                f"{max(r.recovery):.2f}" if r.recovery else "-",
                memory_cell(r.memory) if r.memory else "-",
                f"{r.fds[0]}→{r.fds[1]}" if r.fds else "-",
                disk_cell(r),
                wal_cell(r),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = [
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
        for line in lines
    ]
    out.insert(1, "-" * len(out[0]))
    return "\n".join(out)


def disk_cell(r: Row) -> str:
    d = r.disk
    return f"{d.data / MiB:.1f}/{d.database / MiB:.1f}/{d.fts / MiB:.1f}" if d else "-"


def wal_cell(r: Row) -> str:
    if r.disk is None:
        return "-"
    largest = f"{r.wal_max / MiB:.1f}" if r.wal_max is not None else "-"
    return f"{largest}/{r.disk.wal / MiB:.1f}" + ("" if r.bounded else " OVER")


def memory_cell(m: soak_memory.Verdict) -> str:
    warm = f"/{m.warm:.0f}" if m.warm is not None else "/-"
    return f"{m.start:.0f}{warm}→{m.end:.0f}" + ("" if m.flat else " GROWING")
