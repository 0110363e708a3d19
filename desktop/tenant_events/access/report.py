"""The access review as a printable page for auditors: the tenant, the moment or moments, the filters, how
complete the answer is (always: where the history starts and each possible gap in the range), the counts and the
lists. Plain HTML that a browser prints and that Qt's own text engine lays out for a PDF (ui/window/access/
report_writer.py); every name and sentence is escaped, control characters shown (server_text.py).
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Final

from tenant_events import APP_NAME, __version__
from tenant_events.access.filters import AccessFilter
from tenant_events.access.records import Diff, Snapshot
from tenant_events.access.sections import sections
from tenant_events.access.summary import change_counts_line, counts_line
from tenant_events.access.words import change_line, completeness_lines, moment, since, unknown_line, who_line
from tenant_events.entities.state_text import title, when
from tenant_events.server_text import shown

_STYLE: Final = """
body { font-family: sans-serif; font-size: 10pt; color: #1f2328; }
h1 { font-size: 16pt; margin-bottom: 2pt; }
h2 { font-size: 13pt; margin-top: 14pt; }
h3 { font-size: 10.5pt; margin-top: 8pt; margin-bottom: 2pt; }
table { border-collapse: collapse; }
th { text-align: left; background-color: #eaeef2; }
td, th { padding: 2pt 4pt; border: 1px solid #d0d7de; vertical-align: top; font-size: 8.5pt; }
.completeness { background-color: #fff8c5; border: 1px solid #d4a72c; padding: 6pt; }
.gap { color: #9a6700; font-weight: bold; }
.unknown { color: #cf222e; font-weight: bold; font-size: 12pt; }
.small { color: #59636e; font-size: 8.5pt; }
"""
_HEADINGS: Final = {"organization": "Organizations", "group": "Groups", "user": "Users"}


def _e(text: object) -> str:
    return html.escape(shown(text, None))


def report_html(answer: Snapshot | Diff, flt: AccessFilter, made_at: datetime | None = None) -> str:
    """The whole page; `answer` is narrowed to `flt` already (the filters are printed, not applied)."""
    made = (made_at or datetime.now(UTC)).astimezone(UTC)
    newest = answer.completeness.newest_ms
    if isinstance(answer, Snapshot):
        heading = f"Who held access at {moment(answer.at_ms, newest)}"
        moments = [("Moment", moment(answer.at_ms, newest))]
    else:
        heading = f"What changed after {moment(answer.from_ms)} up to {moment(answer.to_ms, newest)}"
        moments = [("From", moment(answer.from_ms)), ("To", moment(answer.to_ms, newest))]
    grants = answer.grants if isinstance(answer, Snapshot) else tuple(c.grant for c in answer.changes)
    facts = [("Tenant", answer.tenant), *moments, ("Filters", flt.described(grants))]
    out = [
        f"<html><head><meta charset='utf-8'><title>Access review — {_e(answer.tenant)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Access review — {_e(answer.tenant)}</h1>",
        f"<p>{_e(heading)}</p>",
        "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts) + "</table>",
        "<h2>How complete this is</h2>",
        "<div class='completeness'>" + "".join(_completeness(answer)) + "</div>",
    ]
    if not answer.known:
        out.append(f"<p class='unknown'>{_e(unknown_line(answer))}</p>")
    elif isinstance(answer, Snapshot):
        out += _snapshot(answer)
    else:
        out += _diff(answer)
    out.append(
        f"<p class='small'>Prepared {made.strftime('%Y-%m-%d %H:%M:%S UTC')} by {APP_NAME} {__version__} from the "
        "tenant's stored events. Times are UTC.</p></body></html>"
    )
    return "\n".join(out)


def _completeness(answer: Snapshot | Diff) -> list[str]:
    lines = completeness_lines(answer.completeness)
    return [
        f"<p class='gap'>{_e(line)}</p>" if line.startswith("Possible gap") else f"<p>{_e(line)}</p>"
        for line in lines
    ] + ([] if answer.completeness.gaps else ["<p>No possible gap inside the range.</p>"])


def _snapshot(snapshot: Snapshot) -> list[str]:
    out = ["<h2>Counts</h2>", f"<p>{_e(counts_line(snapshot))}</p>"]
    for kind, found in sections(snapshot.grants).items():
        out.append(f"<h2>{_HEADINGS[kind]} ({len(found):,})</h2>")
        if not found:
            out.append("<p>None.</p>")
        for section in found:
            out.append(f"<h3>{_e(title(section.entity))}</h3>")
            out.append(
                "<table width='100%'><thead><tr><th width='50%'>Access</th><th width='26%'>Since</th>"
                "<th width='24%'>Event</th></tr></thead>"  # a header row repeated on every page
            )
            out += [
                f"<tr><td>{_e(said)}</td><td>{_e(since(grant.since_ms))}</td><td>{_e(grant.event_id or '')}</td></tr>"
                for said, grant in section.lines
            ]
            out.append("</table>")
    return out


def _diff(diff: Diff) -> list[str]:
    out = ["<h2>Counts</h2>", f"<p>{_e(change_counts_line(diff))}</p>", "<h2>Changes</h2>"]
    if not diff.changes:
        return [*out, "<p>None.</p>"]
    out.append(
        "<table width='100%'><thead><tr><th width='13%'>When</th><th width='10%'>Change</th>"
        "<th width='29%'>What changed</th><th width='30%'>The event that did it</th><th width='18%'>Who</th></tr>"
        "</thead>"  # a header row repeated on every page
    )
    for change in diff.changes:
        event = (
            f"{_e(change.sentence.text)}<br><span class='small'>{_e(change.event_type)} {_e(change.event_id)}</span>"
            if change.sentence is not None and change.event_id is not None
            else "(no longer stored)"
        )
        who = _e(who_line(change)) if change.event_id is not None else ""
        out.append(
            f"<tr><td>{_e(when(change.at_ms))}</td><td>{_e(change.kind.value)}</td><td>{_e(change_line(change))}</td>"
            f"<td>{event}</td><td>{who}</td></tr>"
        )
    out.append("</table>")
    return out
