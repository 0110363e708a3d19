"""Settings → Alert rules → "Import Sigma rules…": a rule that cannot be expressed shows its one line under the
path and nothing joins the list; good rules join it marked Sigma and are saved with the settings. Screenshot of
the dialog with its error (artifacts/screenshots/sigma-import-error-*.png)."""

from __future__ import annotations

import pytest

from helpers.fixtures_ui import QT_OFFSCREEN_NOISE, save_screenshot
from helpers.sigma_samples import ELEVATION
from tenant_events.alert_settings import AlertSettings
from tenant_events.alerts import BUILTIN_RULES, load_rules
from tenant_events.settings import Settings
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.settings.settings_dialog import SettingsDialog

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
MINE = {"id": "mine", "name": "Mine", "types": ["user.deleted"]}
GOOD = ELEVATION
BAD = """title: Sign-in from a dashed path
logsource: {product: auth0, service: events}
detection:
  s:
    type: user.created
    data.object.email|windash: -admin
  condition: s
"""


def _labels(page):
    return [page.list.item(r).text() for r in range(page.list.count())]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_import_dialog_shows_why_nothing_was_imported_then_imports(qtbot, qapp, tmp_path, theme):
    apply_theme(qapp, theme)
    (tmp_path / "bad.yml").write_text(BAD)
    (tmp_path / "good.yml").write_text(GOOD)
    d = SettingsDialog(Settings(alerts=AlertSettings(rules=[MINE])), set())
    qtbot.addWidget(d)
    d.show()
    page = d.rules_page
    d.tabs.setCurrentWidget(page)
    before = _labels(page)
    assert page.sigma_button.text() == "&Import Sigma rules…" and page.sigma_button.isVisible()

    page.sigma_button.click()
    dialog = page.sigma_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.import_button.click()
    assert dialog.errors["path"].text() == "Choose a Sigma file or a folder of them."
    dialog.path.setText(str(tmp_path / "bad.yml"))
    assert not dialog.errors["path"].isVisible()
    dialog.import_button.click()
    error = dialog.errors["path"]
    assert error.isVisible() and dialog.isVisible()
    assert error.text() == (
        f"{tmp_path / 'bad.yml'}: Sigma rule 'Sign-in from a dashed path': data.object.email|windash: the "
        "modifier windash is not supported (supported: contains, startswith, endswith, re, cidr, exists, all, "
        "cased) — nothing was imported"
    )
    qtbot.waitUntil(
        lambda: error.height() > 0 and error.visibleRegion().boundingRect().height() >= error.height()
    )
    shot = save_screenshot(dialog, f"sigma-import-error-{theme}")
    assert shot.stat().st_size > 3000
    assert _labels(page) == before and dialog.imported is None

    dialog.path.setText(str(tmp_path))  # the folder: the bad file in it refuses the whole import too
    dialog.import_button.click()
    assert "bad.yml" in error.text() and dialog.isVisible() and _labels(page) == before

    (tmp_path / "bad.yml").unlink()
    dialog.import_button.click()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    labels = _labels(page)
    assert labels[: len(before)] == before
    assert labels[len(before) :] == ["Temporary elevation (critical) · Sigma"]
    assert page.list.currentItem().text() == "Temporary elevation (critical) · Sigma"

    assert d.apply()
    saved = load_rules(d.settings.alerts.rules, BUILTIN_RULES)
    assert saved.errors == ()
    elevation = saved.get("quick-elevation")
    assert (
        elevation.origin == "sigma"
        and elevation.sequence.ordered
        and elevation.group_by == ["object.user.user_id"]
    )
    assert saved.get("mine").origin == "own"


NOT_FILTER = """title: Role granted by a script
name: script-grant
logsource: {product: auth0, service: events}
detection:
  s: {type: group.role.assigned}
  ours: {data.context.client.id|cased: cli_Backoffice}
  condition: s and not ours
"""


def test_editing_another_field_of_an_imported_rule_keeps_conditions_the_text_cannot_show(qtbot, tmp_path):
    (tmp_path / "not.yml").write_text(NOT_FILTER)
    d = SettingsDialog(Settings(), set())
    qtbot.addWidget(d)
    d.show()
    page = d.rules_page
    d.tabs.setCurrentWidget(page)
    page.sigma_button.click()
    page.sigma_dialog.path.setText(str(tmp_path / "not.yml"))
    page.sigma_dialog.import_button.click()
    qtbot.waitUntil(lambda: not page.sigma_dialog.isVisible())
    assert page.list.currentItem().text() == "Role granted by a script (warning) · Sigma"
    form = page.form
    assert form.conditions.isReadOnly() and "kept as they are" in form.conditions.toolTip()
    form.severity.setCurrentIndex(2)  # critical: an edit of another field
    form.name.setText("Role granted by a script, not ours")
    assert d.apply()
    rule = load_rules(d.settings.alerts.rules, BUILTIN_RULES).get("script-grant")
    assert rule.severity == "critical" and rule.name == "Role granted by a script, not ours"
    [cond] = rule.conditions
    assert (cond.field, cond.op, cond.value, cond.negate, cond.ignore_case) == (
        "context.client.id",
        "equals",
        "cli_Backoffice",
        True,
        False,
    )
    # a rule whose conditions the text can say stays editable there
    page.add_rule()
    assert not form.conditions.isReadOnly()
