"""Following the settings file's rules (what a running `stream` and a relay do), on a real link and a real file:
a file that is not there changes nothing; one that cannot be read is said once (after a second look, so a save
caught mid-write is not reported), and the rules before keep running; a valid change is taken in with one line."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tenant_events.alert_settings import AlertSettings
from tenant_events.paths import AppPaths
from tenant_events.tenant import rules_follow
from tenant_events.tenant.link import TenantLink
from tenant_events.tenant.rules_follow import follow_rules, settings_stamp
from tenant_events.tenant.sources import AccessToken, StreamFrom

QUIET = {"rules": [{"id": "off-hours", "enabled": False}]}
MINE = {"id": "mine", "name": "Mine", "types": ["user.deleted"], "severity": "warning"}


def _save(path: Path, alerts: dict[str, object] | str) -> None:
    """Whole, by rename, as the app and the commands save."""
    text = alerts if isinstance(alerts, str) else json.dumps({"schema_version": 3, "alerts": alerts})
    new = path.with_name(path.name + ".new")
    new.write_text(text)
    os.replace(new, path)


async def _looks(count: list[int], more: int) -> None:
    """Until the follower has looked at the file `more` times again."""
    target = count[0] + more
    for _ in range(2000):
        if count[0] >= target:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the follower stopped looking at the file")


def test_missing_damaged_and_changed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules_follow, "FOLLOW_EVERY_S", 0.02)
    looked = [0]
    real_stamp: Callable[[Path], object] = rules_follow.file_stamp

    def counted(path: Path) -> object:
        looked[0] += 1
        return real_stamp(path)

    monkeypatch.setattr(rules_follow, "file_stamp", counted)
    paths = AppPaths.resolve(tmp_path).ensure()
    settings = paths.settings_file
    _save(settings, QUIET)
    alerts = AlertSettings.model_validate(QUIET)
    link = TenantLink("acme", paths, StreamFrom("http://127.0.0.1:9/api/v2", AccessToken("t")), alerts=alerts)
    lines: list[str] = []

    def ids() -> set[str]:
        assert link.rules is not None
        return {rule.id for rule in link.rules.evaluator.engine.rules}

    async def scenario() -> None:
        stop = follow_rules(link, paths, alerts, settings_stamp(paths), lines.append)
        try:
            before = ids()
            settings.unlink()  # an editor saving by rename, between its two steps
            await _looks(looked, 5)
            assert ids() == before and lines == []

            _save(settings, "{\n  \x1b[31m")  # damaged (a control character in it, too)
            await _looks(looked, 5)
            assert len(lines) == 1, lines  # said once, not every second
            assert lines[0].startswith(
                "the alert rules saved to the settings file were not taken in (the rules before keep running): "
            )
            assert "\x1b" not in lines[0]
            assert ids() == before

            _save(settings, {"rules": [*QUIET["rules"], MINE]})
            await _looks(looked, 5)
            assert ids() == before | {"mine"}
            assert (
                lines[1]
                == f"the alert rules changed in the settings file: {len(before) + 1} rules run from now on"
            )

            _save(settings, {"rules": [*QUIET["rules"], MINE]})  # written again, nothing changed: no line
            await _looks(looked, 5)
            assert len(lines) == 2
        finally:
            await stop()

    asyncio.run(scenario())
