"""The built-in detection pack: on by default (except the per-type kind), each explained in one sentence, with
a severity, its MITRE ATT&CK technique ids and fixtures that must fire it and must not (builtin_fixtures.py).

Only these raise notifications with default settings. Thresholds are set above what an ordinary day looks like
(the simulator's routine traffic: ~170 events a minute, of which ~33 sign-ups, ~7 user and ~4 group deletions,
from a couple of dozen clients) and well below what the incidents they stand for look like. Each carries a noise
budget (`max_alerts_per_day`, which `rules test` and the backtest check, never enforce): above what a whole day
of that routine traffic raises, so a day over it is news about the rule or the tenant. Field names follow the real
payloads (docs/event-stream.md "Payloads").
"""

from __future__ import annotations

from typing import Final

from tenant_events.alerts.builtin_fixtures import FIXTURES
from tenant_events.alerts.rule_model import Condition, Rule, Threshold, TimeOfDay
from tenant_events.alerts.rule_parts import Novelty, Sequence, SequenceStep, StateCheck
from tenant_events.wire.event_types import DEFAULT_NOTIFY_TYPES

ADMIN_LIKE: Final = ["admin", "owner", "superuser"]
ADMIN_ROLE_NAMED: Final = Condition(field="object.role.name", op="contains", value=ADMIN_LIKE)
DELETIONS: Final = ["user.deleted", "group.deleted", "organization.deleted"]
PRIVILEGED: Final = [
    "group.role.assigned",
    "organization.member.role.assigned",
    "organization.group.role.assigned",
    "organization.connection.added",
    "organization.connection.removed",
]

MASS_DELETION: Final = Rule(
    id="mass-deletion",
    name="Mass deletion",
    explanation="Twenty or more users, or groups, or organizations deleted within a minute: a script gone "
    "wrong or an account being misused.",
    severity="critical",
    types=["user.deleted", "group.deleted", "organization.deleted"],
    threshold=Threshold(count=20, window_seconds=60, per_type=True),
    coalesce_minutes=30,
    mitre=["T1531", "T1485"],
    max_alerts_per_day=3,
)
ADMIN_ROLE: Final = Rule(
    id="admin-role",
    name="Admin role assigned",
    explanation="A role whose name says admin, owner or superuser was given to a user, an organization "
    "member or a group.",
    severity="critical",
    types=["group.role.assigned", "organization.member.role.assigned", "organization.group.role.assigned"],
    conditions=[ADMIN_ROLE_NAMED],
    mitre=["T1098.003"],
    max_alerts_per_day=10,
)
ORG_CONNECTION: Final = Rule(
    id="org-connection",
    name="Organization connection changed",
    explanation="A login connection was added to or removed from an organization, which changes who can "
    "sign in to it (one alert per organization).",
    severity="warning",
    types=["organization.connection.added", "organization.connection.removed"],
    group_by=["object.organization.id"],
    state=[StateCheck(check="organization_created_within", minutes=30, negate=True)],
    coalesce_minutes=30,
    mitre=["T1556"],
    max_alerts_per_day=20,
)
ORG_CONNECTION_ONBOARDING: Final = Rule(
    id="org-connection-onboarding",
    name="Organization set up with connections",
    explanation="Connections added to an organization created less than 30 minutes earlier: a new customer "
    "being set up (one alert per organization, said once).",
    severity="info",
    types=["organization.connection.added", "organization.connection.removed"],
    group_by=["object.organization.id"],
    state=[StateCheck(check="organization_created_within", minutes=30)],
    coalesce_minutes=30,
    mitre=["T1556"],
    max_alerts_per_day=40,
)
ORG_DELETED: Final = Rule(
    id="org-deleted",
    name="Organization deleted",
    explanation="An organization was deleted, and with it its members' access through it.",
    severity="warning",
    types=["organization.deleted"],
    mitre=["T1485", "T1531"],
    max_alerts_per_day=10,
)
SIGNUP_BURST: Final = Rule(
    id="signup-burst",
    name="Burst of sign-ups",
    explanation="Sixty or more users created within a minute: a bot wave or a campaign taking off.",
    severity="warning",
    types=["user.created"],
    threshold=Threshold(count=60, window_seconds=60),
    coalesce_minutes=30,
    mitre=["T1136.003"],
    max_alerts_per_day=3,
)
OFF_HOURS: Final = Rule(
    id="off-hours",
    name="Changes outside working hours",
    explanation="Organizations or groups changed, or users deleted, outside your working hours.",
    severity="info",
    types=["organization.*", "group.*", "user.deleted"],
    time_of_day=TimeOfDay(when="outside_working_hours"),
    coalesce_minutes=60,
    mitre=["T1078"],
    max_alerts_per_day=24,
)
ADMIN_GROUP_MEMBER: Final = Rule(
    id="admin-group-member",
    name="Member added to an admin group",
    explanation="A user was added to a group that holds an admin-like role, which makes them an admin "
    "without any role being assigned to them.",
    severity="warning",
    types=["group.member.added"],
    state=[StateCheck(check="group_holds_admin_role")],
    mitre=["T1098.003"],
    max_alerts_per_day=10,
)
TEMPORARY_ELEVATION: Final = Rule(
    id="temporary-elevation",
    name="Temporary elevation",
    explanation="An admin-like role was assigned and removed again for the same member or group within an "
    "hour: a way to act as admin and leave no standing grant behind.",
    severity="critical",
    types=[
        "group.role.assigned",
        "group.role.deleted",
        "organization.member.role.assigned",
        "organization.member.role.deleted",
        "organization.group.role.assigned",
        "organization.group.role.deleted",
    ],
    group_by=["object.user.user_id|object.group.id", "object.role.id"],
    sequence=Sequence(
        steps=[  # a removal names the role by id only (the service sends no name on group.role.deleted)
            SequenceStep(types=["*.role.assigned"], conditions=[ADMIN_ROLE_NAMED]),
            SequenceStep(types=["group.role.deleted", "organization.*.role.deleted"]),
        ],
        within_seconds=3600,
    ),
    coalesce_minutes=30,
    mitre=["T1098.003", "T1070"],
    max_alerts_per_day=3,
)
MASS_DELETION_BY_ACTOR: Final = Rule(
    id="mass-deletion-by-actor",
    name="Mass deletion by one actor",
    explanation="Ten or more users, groups or organizations deleted by the same client (or, without one, "
    "from the same IP) within ten minutes, even when no single minute crosses the global threshold.",
    severity="critical",
    types=DELETIONS,
    group_by=["context.client.id|context.request.ip"],
    threshold=Threshold(count=10, window_seconds=600),
    coalesce_minutes=30,
    mitre=["T1531", "T1485"],
    max_alerts_per_day=5,
)
ADMIN_GROUP_DELETED: Final = Rule(
    id="admin-group-deleted",
    name="Admin group deleted",
    explanation="A group that held an admin-like role was deleted, which takes admin access away from all "
    "of its members at once.",
    severity="warning",
    types=["group.deleted"],
    state=[StateCheck(check="group_held_admin_role")],
    mitre=["T1531"],
    max_alerts_per_day=5,
)
SIGNUP_WAVE: Final = Rule(
    id="signup-wave",
    name="Sign-ups of unverified or throwaway accounts",
    explanation="Twenty or more accounts created within five minutes with an unverified e-mail address or one "
    "at a disposable domain: fake accounts being made in bulk.",
    severity="warning",
    types=["user.created"],
    any_of=[
        Condition(field="object.email_verified", op="equals", value="false"),
        Condition(field="object.email", op="domain_in_list", value="disposable-email-domains"),
    ],
    threshold=Threshold(count=20, window_seconds=300),
    coalesce_minutes=30,
    mitre=["T1136.003"],
    max_alerts_per_day=3,
)
SHARED_PHONE: Final = Rule(
    id="shared-phone",
    name="One phone number on many users",
    explanation="The same phone number on three or more different users within a day: accounts made by one "
    "person, or a phone number taken over for sign-in.",
    severity="warning",
    types=["user.created", "user.updated"],
    group_by=["object.phone_number"],
    threshold=Threshold(count=3, window_seconds=86_400, distinct="object.user_id"),
    coalesce_minutes=30,
    mitre=["T1136.003"],
    max_alerts_per_day=5,
)
ACCOUNT_LINKED: Final = Rule(
    id="account-linked",
    name="Account linked to another identity",
    explanation="A user gained an identity from another connection (an account link), so someone can now "
    "sign in to it another way.",
    severity="warning",
    types=["user.updated"],
    conditions=[Condition(field="object.identities", op="grew")],
    mitre=["T1098"],
    max_alerts_per_day=20,
)
NEW_PRIVILEGED_ACTOR: Final = Rule(
    id="new-privileged-actor",
    name="Privileged change by a new actor",
    explanation="A role was assigned or an organization's connections were changed by a client (or from an "
    "IP) not seen making such changes in the last 30 days.",
    severity="warning",
    types=PRIVILEGED,
    novelty=Novelty(key="context.client.id|context.request.ip", days=30),
    mitre=["T1078.004"],
    max_alerts_per_day=10,
)
CHOSEN_TYPES: Final = Rule(
    id="event-types",
    name="Events of chosen types",
    explanation="Every event of the types you choose, one alert each (bursts within a minute are grouped).",
    enabled=False,
    severity="info",
    types=sorted(t.value for t in DEFAULT_NOTIFY_TYPES),
    coalesce_minutes=1,
    max_alerts_per_day=100,
)

BUILTIN_RULES: Final[tuple[Rule, ...]] = tuple(
    Rule.model_validate({**r.model_dump(), "origin": "builtin", "tests": FIXTURES.get(r.id, [])})
    for r in (
        MASS_DELETION,
        MASS_DELETION_BY_ACTOR,
        ADMIN_ROLE,
        ADMIN_GROUP_MEMBER,
        TEMPORARY_ELEVATION,
        ORG_CONNECTION,
        ORG_CONNECTION_ONBOARDING,
        ORG_DELETED,
        ADMIN_GROUP_DELETED,
        SIGNUP_BURST,
        SIGNUP_WAVE,
        SHARED_PHONE,
        ACCOUNT_LINKED,
        NEW_PRIVILEGED_ACTOR,
        OFF_HOURS,
        CHOSEN_TYPES,
    )
)
