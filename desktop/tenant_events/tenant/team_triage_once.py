"""A triage of a team alert from the command line (`tenant-events triage`), shared with the team as the inbox's.

The team's alerts of a hub tenant are the relay's: it delivers them and their resolves. Stored here alone, a
resolve from the command line left the team's pager open and every teammate's inbox showing the alert as
before, while this computer said it was resolved. So the command connects to the hub for the moment with the
hub profile's saved secret, makes the change here under this hub user's name and writes it to the team's triage
bucket under this user's own key (tenant/team_triage.py), as the inbox's buttons do. When the hub cannot be
reached nothing changes here either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tenant_events.auth.secret_store import SecretStore, open_secret_store
from tenant_events.errors import UserFixableError
from tenant_events.hub.connection import HubUnavailable, describe
from tenant_events.paths import AppPaths
from tenant_events.settings import load_settings
from tenant_events.settings.hubs import HubProfile
from tenant_events.store.alert_triage import AlertTriage
from tenant_events.store.team_alert_rows import team_alert_ids
from tenant_events.tenant.sources import of_hub_profile
from tenant_events.tenant.team_triage import start_mirror
from tenant_events.values.triage import Triage, TriageState


def team_of(paths: AppPaths, profile: str, database: Path, alert_id: int) -> HubProfile | None:
    """The hub profile whose team raised alert `alert_id` of tenant `profile`; None for any other alert."""
    hub = load_settings(paths).hub(profile)
    return hub if hub is not None and alert_id in team_alert_ids(database) else None


async def triage_for_team(
    paths: AppPaths,
    hub: HubProfile,
    database: Path,
    change: tuple[int, TriageState, str, float | None],
    secrets: Callable[[], SecretStore] = lambda: open_secret_store().store,
) -> Triage:
    """`change` (alert id, state, note, snooze end) made in `database` and written to the team's triage; the
    change as stored. HubUnavailable, with nothing changed, when the hub's triage cannot be reached."""
    alert_id, state, note, until = change
    # the keyring may block (an unlock prompt): never on the loop thread
    source = await asyncio.to_thread(lambda: of_hub_profile(hub, secrets(), paths.data_dir))
    try:
        mirror = await start_mirror(database, source.options, source.hub_tenant)
    except UserFixableError:
        raise
    except Exception as exc:  # no answer, an older hub without the bucket, a user who may not read it
        raise HubUnavailable(
            f"the team's triage of {hub.name} on the hub cannot be reached ({describe(exc)}); nothing changed",
            "check the hub and its permissions (docs/hub-permissions.md), then try again",
        ) from None
    try:
        who = mirror.board.user if mirror.board is not None else hub.user
        made = await asyncio.to_thread(_set, database, alert_id, state, who, note, until)
        try:
            await mirror.publish(alert_id, state, note, until, made.at)
        except Exception as exc:
            raise HubUnavailable(
                f"alert {alert_id} is {state} here, but the team's triage on the hub did not take it "
                f"({describe(exc)}): the team still sees the alert as before",
                "try again once the hub answers",
            ) from None
    finally:
        await mirror.stop()
    return made


def _set(
    database: Path, alert_id: int, state: TriageState, who: str, note: str, until: float | None
) -> Triage:
    with AlertTriage(database) as triage:
        return triage.set(alert_id, state, who, note, until)
