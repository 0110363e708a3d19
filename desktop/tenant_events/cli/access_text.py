"""`tenant-events access` as text: a head (the tenant, the moment, how complete the answer is, counts), then per
organization, group and user their grants; for `access diff` one change a line with the event and who did it.
Names and sentences come from the tenant's events: escaped before they reach the terminal (server_text.py)."""

from __future__ import annotations

from typing import IO

from tenant_events.access.records import Diff, Snapshot
from tenant_events.access.sections import sections
from tenant_events.access.summary import change_counts_line, counts_line
from tenant_events.access.words import change_line, completeness_lines, event_line, moment, since
from tenant_events.entities.state_text import title, when
from tenant_events.server_text import shown

_HEADINGS = {"organization": "Organizations", "group": "Groups", "user": "Users"}


def write(answer: Snapshot | Diff, out: IO[str]) -> int:
    """Write the answer; returns how many grants or changes it holds."""
    lines = _snapshot(answer) if isinstance(answer, Snapshot) else _diff(answer)
    out.writelines(shown(line, None) + "\n" for line in lines)
    return len(answer.grants) if isinstance(answer, Snapshot) else len(answer.changes)


def _snapshot(snapshot: Snapshot) -> list[str]:
    newest = snapshot.completeness.newest_ms
    lines = [f"Access in {snapshot.tenant} at {moment(snapshot.at_ms, newest)}"]
    lines += completeness_lines(snapshot.completeness)
    lines.append(counts_line(snapshot))
    for kind, found in sections(snapshot.grants).items():
        if not found:
            continue
        lines += ["", f"{_HEADINGS[kind]} ({len(found):,})"]
        for section in found:
            lines.append(f"  {title(section.entity)}")
            lines += [f"    {said}  (since {since(grant.since_ms)})" for said, grant in section.lines]
    return lines


def _diff(diff: Diff) -> list[str]:
    newest = diff.completeness.newest_ms
    lines = [f"Changes in {diff.tenant} after {moment(diff.from_ms)} up to {moment(diff.to_ms, newest)}"]
    lines += completeness_lines(diff.completeness)
    lines.append(change_counts_line(diff))
    for change in diff.changes:
        lines += [
            f"{when(change.at_ms)}  {change.kind:<18}  {change_line(change)}",
            f"    {event_line(change)}",
        ]
    return lines
