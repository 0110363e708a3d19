"""An alert's life, firing → acknowledged → resolved: the one state machine the rules, the store, the desktop,
the command line, the relay and every destination follow.

    raise ──▶ FIRING ◀──────────────────── reopen ───────────────────────┐
               │  ▲ refire (a new version: said again, unread again)      │
               │  └─────────────┐                                        │
               ├── acknowledge ─▶ ACKNOWLEDGED ── refire: still acknowledged, said again
               ├── snooze ──────▶ SNOOZED (until) ── its end: FIRING again
               └── resolve (triage, or `resolve_after_minutes` without a firing) ─▶ RESOLVED ─┘
                                                                              (a later firing: a new alert)

What each phase means:
  * a **firing** is a rule's decision that something happened (one event, a threshold window that crossed, a
    sequence that completed); the first makes an alert (version 1), each later one that folds into it is a new
    **version** (the alert's `occurrences`): said on the desktop and delivered to the destinations again;
  * a firing **folds** into the rule's (the group's) open alert while the alert is not resolved and, live,
    within `coalesce_minutes` of the firing that raised it (a bound from the raise, never rolled forward by
    later firings: a trickle cannot keep one alert open for good) and within `resolve_after_minutes` of its
    last firing; caught up, while the same catch-up goes on (a backlog is one alert per rule and group);
  * an unacknowledged critical alert (FIRING) is said again every `repeat_minutes` (the desktop's, each
    destination's) until it is acknowledged, snoozed or resolved;
  * a resolve is said to the destinations that want it (`send_resolved`) and withdraws its desktop notification,
    as acknowledging does.

Acknowledged, snoozed and resolved are triage states (values/triage.py, kept by store/alert_triage.py, with who
and when); a resolve by quiet time is a triage entry by `RULES_WHO`. No I/O: the callers read the facts (times,
triage state) and act on the answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal, Protocol

from tenant_events.values.triage import TriageState


class Phase(StrEnum):
    FIRING = "firing"
    ACKNOWLEDGED = "acknowledged"
    SNOOZED = "snoozed"
    RESOLVED = "resolved"


Transition = Literal["refire", "acknowledge", "snooze", "resolve", "reopen"]
DeliveryKind = Literal["firing", "repeat", "resolved"]
RULES_WHO: Final = "Tenant Events"  # who resolved an alert that went quiet (the triage history names it)
CATCH_UP_HOLD_S: Final = 10.0  # a catch-up alert is delivered this long after its last version (one delivery)

_AFTER: Final[dict[tuple[Phase, Transition], Phase]] = {
    (Phase.FIRING, "refire"): Phase.FIRING,
    (Phase.ACKNOWLEDGED, "refire"): Phase.ACKNOWLEDGED,
    (Phase.SNOOZED, "refire"): Phase.SNOOZED,
    (Phase.FIRING, "acknowledge"): Phase.ACKNOWLEDGED,
    (Phase.SNOOZED, "acknowledge"): Phase.ACKNOWLEDGED,
    (Phase.ACKNOWLEDGED, "acknowledge"): Phase.ACKNOWLEDGED,
    (Phase.FIRING, "snooze"): Phase.SNOOZED,
    (Phase.ACKNOWLEDGED, "snooze"): Phase.SNOOZED,
    (Phase.SNOOZED, "snooze"): Phase.SNOOZED,
    (Phase.FIRING, "resolve"): Phase.RESOLVED,
    (Phase.ACKNOWLEDGED, "resolve"): Phase.RESOLVED,
    (Phase.SNOOZED, "resolve"): Phase.RESOLVED,
    (Phase.RESOLVED, "resolve"): Phase.RESOLVED,
    (Phase.FIRING, "reopen"): Phase.FIRING,
    (Phase.ACKNOWLEDGED, "reopen"): Phase.FIRING,
    (Phase.SNOOZED, "reopen"): Phase.FIRING,
    (Phase.RESOLVED, "reopen"): Phase.FIRING,
}
_BY_TRIAGE: Final[dict[TriageState, Transition]] = {
    "acknowledged": "acknowledge",
    "snoozed": "snooze",
    "resolved": "resolve",
    "open": "reopen",
}


_DONE: Final[dict[Transition, str]] = {
    "refire": "fired again",
    "acknowledge": "acknowledged",
    "snooze": "snoozed",
    "resolve": "resolved",
    "reopen": "reopened",
}


class NotAllowed(ValueError):
    """A transition the machine does not make (a firing folded into a resolved alert, a resolved alert
    acknowledged or snoozed without being reopened)."""


def after(phase: Phase, transition: Transition) -> Phase:
    """The phase `transition` leads to from `phase`; NotAllowed for one that cannot happen."""
    found = _AFTER.get((phase, transition))
    if found is None:
        again = "; reopen it first" if phase is Phase.RESOLVED and transition != "refire" else ""
        raise NotAllowed(f"the alert is {phase}: it cannot be {_DONE[transition]}{again}")
    return found


def allows(phase: Phase, transition: Transition) -> bool:
    """Whether `transition` can happen from `phase` (the inbox offers only those)."""
    return (phase, transition) in _AFTER


def transition_of(state: TriageState) -> Transition:
    """The transition a triage entry stands for."""
    return _BY_TRIAGE[state]


def phase_of(triage: str | None, until: float | None, now: float) -> Phase:
    """The phase of an alert from its current triage entry (None: nobody triaged it) at `now`: a snooze that has
    ended is FIRING again by itself, no timer has to fire."""
    if triage is None or triage == "open":
        return Phase.FIRING
    if triage == "snoozed":
        return Phase.SNOOZED if until is not None and until > now else Phase.FIRING
    return Phase(triage)


class FoldFacts(Protocol):
    """What the fold decision reads of the rule's open alert (alerts/open_alert.py has these as it goes): all
    times are the events' own (ms), except `updated_at` (wall clock, s) for a catch-up."""

    @property
    def resolved(self) -> bool: ...
    @property
    def catch_up(self) -> bool: ...
    @property
    def raised_ms(self) -> int: ...  # event time of the firing that raised it
    @property
    def last_fired_ms(self) -> int: ...  # event time of its latest firing
    @property
    def updated_at(self) -> float: ...


@dataclass(frozen=True, slots=True)
class OpenFacts:
    """FoldFacts as plain data (an alert read back, a test)."""

    resolved: bool
    catch_up: bool
    raised_ms: int
    last_fired_ms: int
    updated_at: float


def folds(
    alert: FoldFacts,
    firing_ms: int,
    *,
    catch_up: bool,
    now: float,
    coalesce_ms: int,
    resolve_after_ms: int,
    catch_up_s: float,
) -> bool:
    """Whether a firing (its event time `firing_ms`) is a new version of the open alert, not a new alert."""
    if alert.resolved or alert.catch_up is not catch_up:
        return False
    if catch_up:
        return now - alert.updated_at <= catch_up_s  # the same catch-up goes on
    if resolve_after_ms and firing_ms - alert.last_fired_ms >= resolve_after_ms:
        return False  # it had gone quiet for long enough to count as resolved
    return firing_ms - alert.raised_ms < coalesce_ms


def quiet_resolve_due(phase: Phase, last_fired_at: float, resolve_after_s: float, now: float) -> bool:
    """Whether an alert without a firing since `last_fired_at` (wall clock) resolves by itself now."""
    return phase is not Phase.RESOLVED and resolve_after_s > 0 and now - last_fired_at >= resolve_after_s


def repeat_due(phase: Phase, severity: str, last_said_at: float, repeat_s: float, now: float) -> bool:
    """Whether an alert last said at `last_said_at` is said again now (`repeat_s` 0: never)."""
    return (
        phase is Phase.FIRING and severity == "critical" and repeat_s > 0 and now - last_said_at >= repeat_s
    )


def renotifies(severity: str, rule_renotify: bool) -> bool:
    """Whether a firing folded into a shown alert notifies on the desktop again: a critical one always, a
    warning unless the user turned it off for the rule, an info alert never (it said itself once, quietly; the
    inbox counts the rest — "changes outside working hours" fires at every change)."""
    return severity == "critical" or (severity == "warning" and rule_renotify)


def withdraws(phase: Phase) -> bool:
    """Whether the alert's desktop notification is taken away (someone has it in hand, or it is over)."""
    return phase in (Phase.ACKNOWLEDGED, Phase.RESOLVED)
