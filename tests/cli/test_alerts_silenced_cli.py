"""`tenant-events alerts` says which alerts a silence holds, as the inbox shows them dimmed: ", silenced (<id>)"
in the text line and `silenced_by` in a JSON line; an alert no silence matches says nothing of it."""

from __future__ import annotations

import orjson

from helpers.cli_here import run_here
from helpers.deliveries import alert_write, store_alerts
from tenant_events.paths import AppPaths
from tenant_events.settings.silences_file import SilenceBook, new_silence


def test_alerts_lists_a_silenced_alert_as_silenced(tmp_path):
    paths = AppPaths.resolve(str(tmp_path)).ensure()
    (tmp_path / "tenants").mkdir(exist_ok=True)
    store_alerts(tmp_path / "tenants" / "acme.sqlite3", [alert_write(), alert_write("off-hours", "warning")])
    silence = SilenceBook.of(paths).add(
        new_silence(duration_s=3600, author="ana", rule="mass-deletion", tenant="acme")
    )
    text = run_here(["alerts", "--data-dir", str(tmp_path)])
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    [held] = [line for line in lines if f", silenced ({silence.id})" in line]
    [other] = [line for line in lines if line != held]
    assert "critical" in held and "warning" in other and "silenced" not in other, lines
    jsonl = run_here(["alerts", "--data-dir", str(tmp_path), "--jsonl", "-"])
    rows = [orjson.loads(line) for line in jsonl.stdout.splitlines()]
    assert {r["rule"]: r.get("silenced_by") for r in rows} == {"mass-deletion": silence.id, "off-hours": None}
