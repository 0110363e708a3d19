"""The built-in alert rules: on by default (except the per-type kind), each explained in one sentence.

Only these raise notifications with default settings. Thresholds are set above what an ordinary day looks like
(the simulator's routine traffic: ~170 events a minute, of which ~33 sign-ups, ~7 user and ~4 group deletions) and well
below what the incidents they stand for look like. Field names follow the real payloads (docs/event-stream.md "Payloads").
"""

from __future__ import annotations

from typing import Final

from tenant_events.alerts.rule_model import Condition, Rule, Threshold, TimeOfDay
from tenant_events.wire.event_types import DEFAULT_NOTIFY_TYPES

ADMIN_LIKE: Final = ["admin", "owner", "superuser"]

MASS_DELETION: Final = Rule(
    id="mass-deletion",
    name="Mass deletion",
    explanation="Twenty or more users, or groups, or organizations deleted within a minute: a script gone "
    "wrong or an account being misused.",
    severity="critical",
    types=["user.deleted", "group.deleted", "organization.deleted"],
    threshold=Threshold(count=20, window_seconds=60, per_type=True),
    coalesce_minutes=30,
)
ADMIN_ROLE: Final = Rule(
    id="admin-role",
    name="Admin role assigned",
    explanation="A role whose name says admin, owner or superuser was given to a user, an organization "
    "member or a group.",
    severity="critical",
    types=["group.role.assigned", "organization.member.role.assigned", "organization.group.role.assigned"],
    conditions=[Condition(field="object.role.name", op="contains", value=ADMIN_LIKE)],
)
ORG_CONNECTION: Final = Rule(
    id="org-connection",
    name="Organization connection changed",
    explanation="A login connection was added to or removed from an organization, which changes who can "
    "sign in to it.",
    severity="warning",
    types=["organization.connection.added", "organization.connection.removed"],
)
ORG_DELETED: Final = Rule(
    id="org-deleted",
    name="Organization deleted",
    explanation="An organization was deleted, and with it its members' access through it.",
    severity="warning",
    types=["organization.deleted"],
)
SIGNUP_BURST: Final = Rule(
    id="signup-burst",
    name="Burst of sign-ups",
    explanation="Sixty or more users created within a minute: a bot wave or a campaign taking off.",
    severity="warning",
    types=["user.created"],
    threshold=Threshold(count=60, window_seconds=60),
    coalesce_minutes=30,
)
OFF_HOURS: Final = Rule(
    id="off-hours",
    name="Changes outside working hours",
    explanation="Organizations or groups changed, or users deleted, outside your working hours.",
    severity="info",
    types=["organization.*", "group.*", "user.deleted"],
    time_of_day=TimeOfDay(when="outside_working_hours"),
    coalesce_minutes=60,
)
CHOSEN_TYPES: Final = Rule(
    id="event-types",
    name="Events of chosen types",
    explanation="Every event of the types you choose, one alert each (bursts within a minute are grouped).",
    enabled=False,
    severity="info",
    types=sorted(t.value for t in DEFAULT_NOTIFY_TYPES),
    coalesce_minutes=1,
)

BUILTIN_RULES: Final[tuple[Rule, ...]] = (
    MASS_DELETION,
    ADMIN_ROLE,
    ORG_CONNECTION,
    ORG_DELETED,
    SIGNUP_BURST,
    OFF_HOURS,
    CHOSEN_TYPES,
)
