"""Scenarios: the simulated tenant acts out what alert rules look for, on a timetable or on request.

A scenario is a list of steps, each `{"at": <tenant seconds after start>, "do": <kind>, ...}`, from a JSON file
(`--scenario path.json`, `{"steps": [...]}`) or built in (`--scenario demo`: an alert within the first minute).
`POST /_sim/scenario` runs one step now (admin.py). Kinds and their options:

  mass_deletion  n (30) deletions of `of` (users | groups | organizations) spread over over_s (20) seconds
  admin_grant    a role named admin given `to` a member (of an organization) | group | org_group
  org_connection a connection `action` added | removed to/from an organization
  org_deleted    n (1) organizations deleted
  signup_burst   n (80) users created over over_s (40) seconds
  off_hours      n (6) routine changes (organization and group updates, a member's role removed) over over_s (60)
                 seconds: a late-night session when the viewer's working hours say it is night
  temporary_elevation  an admin role assigned to a member and removed over_s (20) seconds later
  admin_group_member   an admin role given to a group, a user added to it over_s (5) seconds later
  admin_group_deleted  an admin role given to a group, the group deleted over_s (5) seconds later
  signup_wave    n (25) users at a throwaway e-mail domain over over_s (60) seconds
  shared_phone   n (3) users with one phone number over over_s (30) seconds
  account_link   a user created, an identity from another connection linked to it over_s (5) seconds later
  org_renames    every organization renamed (another division's name) over over_s (0) seconds

Deletions and the incidents below them are made by one client from one IP (world.INCIDENT_ACTOR, "Backoffice
Script"), as a script or a misused account would; ordinary traffic is spread over a couple of dozen clients.

Times are the tenant's (activity.py `clock()`), so `--speed` compresses a scenario like the rest of the traffic.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tenant_events.simulator.incidents import INCIDENTS
from tenant_events.simulator.world import ADMIN_ROLE_NAMES, INCIDENT_ACTOR, iso_ms

if TYPE_CHECKING:
    from tenant_events.simulator.activity import Activity

_DELETE_OF: Final = {
    "users": "user.deleted",
    "groups": "group.deleted",
    "organizations": "organization.deleted",
}
_GRANT_TO: Final = {
    "member": "organization.member.role.assigned",
    "group": "group.role.assigned",
    "org_group": "organization.group.role.assigned",
}
_CONNECTION: Final = {"added": "organization.connection.added", "removed": "organization.connection.removed"}
_OFF_HOURS: Final = ("organization.updated", "group.updated", "organization.member.role.deleted")
# kind → (default n, default over_s)
KINDS: Final = {
    "mass_deletion": (30, 20.0),
    "admin_grant": (1, 0.0),
    "org_connection": (1, 0.0),
    "org_deleted": (1, 0.0),
    "signup_burst": (80, 40.0),
    "off_hours": (6, 60.0),
    "temporary_elevation": (1, 20.0),
    "admin_group_member": (1, 5.0),
    "admin_group_deleted": (1, 5.0),
    "signup_wave": (25, 60.0),
    "shared_phone": (3, 30.0),
    "account_link": (1, 5.0),
    "org_renames": (1, 0.0),
}

DEMO: Final = [
    {"at": 40, "do": "admin_grant"},
    {"at": 70, "do": "temporary_elevation", "over_s": 30},
    {"at": 100, "do": "org_connection", "action": "added"},
    {"at": 170, "do": "mass_deletion"},
    {"at": 260, "do": "signup_burst"},
    {"at": 340, "do": "org_deleted"},
    {"at": 420, "do": "org_connection", "action": "removed"},
]


@dataclass(frozen=True)
class Step:
    do: str
    at: float = 0.0
    n: int = 1
    over_s: float = 0.0
    of: str = "users"
    to: str = "member"
    action: str = "added"

    @property
    def types(self) -> tuple[str, ...]:
        if self.do == "mass_deletion":
            return (_DELETE_OF[self.of],)
        if self.do == "admin_grant":
            return (_GRANT_TO[self.to],)
        if self.do == "org_connection":
            return (_CONNECTION[self.action],)
        if self.do == "org_deleted":
            return ("organization.deleted",)
        if self.do == "signup_burst":
            return ("user.created",)
        if self.do in INCIDENTS:
            return ()
        return _OFF_HOURS


def parse_step(data: Any, where: str = "step") -> Step:
    """A step from JSON; ValueError naming the step and the field."""
    if not isinstance(data, dict):
        raise ValueError(f'{where}: must be an object like {{"at": 30, "do": "admin_grant"}}')
    kind = data.get("do")
    if kind not in KINDS:
        raise ValueError(f"{where}: do must be one of {', '.join(KINDS)}; got {kind!r}")
    known = {f.name for f in dataclasses.fields(Step)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}")
    n, over_s = KINDS[kind]
    try:
        step = Step(**{"n": n, "over_s": over_s, **data})
    except TypeError as exc:
        raise ValueError(f"{where}: {exc}") from None
    checks = [
        (isinstance(step.at, int | float) and step.at >= 0, "at must be a number of seconds >= 0"),
        (isinstance(step.n, int) and 1 <= step.n <= 100_000, "n must be a whole number from 1 to 100000"),
        (
            isinstance(step.over_s, int | float) and step.over_s >= 0,
            "over_s must be a number of seconds >= 0",
        ),
        (step.of in _DELETE_OF, f"of must be one of {', '.join(_DELETE_OF)}"),
        (step.to in _GRANT_TO, f"to must be one of {', '.join(_GRANT_TO)}"),
        (step.action in _CONNECTION, f"action must be one of {', '.join(_CONNECTION)}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(f"{where}: {message}")
    return step


def load_scenario(name_or_path: str) -> list[Step]:
    """The built-in "demo" or the steps of a JSON file, by time."""
    if name_or_path == "demo":
        raw: Any = DEMO
    else:
        try:
            doc = json.loads(Path(name_or_path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"scenario {name_or_path}: {exc}") from None
        raw = doc.get("steps") if isinstance(doc, dict) else None
        if not isinstance(raw, list):
            raise ValueError(f'scenario {name_or_path}: expected {{"steps": [...]}}')
    steps = [parse_step(s, f"scenario step {i + 1}") for i, s in enumerate(raw)]
    return sorted(steps, key=lambda s: s.at)


class ScenarioPlayer:
    """Runs steps against the tenant's life; every event goes through Activity.emit like any other."""

    def __init__(self, activity: Activity) -> None:
        self.activity = activity

    async def play(self, steps: list[Step]) -> None:
        """Each step at its time after the start (tenant time)."""
        start = self.activity.clock()
        for step in steps:
            wait = start + step.at - self.activity.clock()
            if wait > 0:
                await asyncio.sleep(wait / self.activity.config.speed)
            await self.run(step)

    async def run(self, step: Step) -> int:
        """Emit the step's events (spread over `over_s` tenant seconds); returns the last log sequence."""
        pause = step.over_s / step.n / self.activity.config.speed if step.n > 1 else 0.0
        last = self.activity.log.last_seq
        life = self.activity.life
        life.actor = INCIDENT_ACTOR if step.do == "mass_deletion" or step.do in INCIDENTS else None
        try:
            for i in range(step.n):
                if i and pause:
                    await asyncio.sleep(pause)
                if step.do in INCIDENTS:
                    last = await self._act_out(step)
                else:
                    last = self._emit_one(step)
        finally:
            life.actor = None
        return last

    async def _act_out(self, step: Step) -> int:
        """One incident: its events in order, the time between them spread over `over_s` when it has several."""
        activity = self.activity
        events = INCIDENTS[step.do](activity.life, iso_ms(activity.clock()))
        gap = (
            step.over_s / (len(events) - 1) / activity.config.speed
            if step.n == 1 and len(events) > 1
            else 0.0
        )
        last = activity.log.last_seq
        for i, (name, obj) in enumerate(events):
            if i and gap:
                await asyncio.sleep(gap)
            last = activity.emit_event(name, obj)
        return last

    def _emit_one(self, step: Step) -> int:
        life = self.activity.life
        if step.do != "admin_grant":
            return self.activity.emit(1, step.types, announce=True)
        life.grantable = [r for r in life.roles if r[1] in ADMIN_ROLE_NAMES]
        try:
            return self.activity.emit(1, step.types, announce=True)
        finally:
            life.grantable = life.roles
