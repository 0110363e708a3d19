"""Settings → Alert rules: list, switch on/off, edit with the rules' own validation shown under the field,
invalid entries of the settings file kept as they are, and "Test against history" on a real store filled by a
real simulator's incidents ("would have fired 2 times in the last 7 days")."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from helpers.browser import act_as_browser
from helpers.fixtures_ui import (
    QT_OFFSCREEN_NOISE,
    profile_for,
    run_async,
    running_app,
    save_screenshot,
    signal_future,
    until,
)
from tenant_events.alert_settings import WEEKDAYS, AlertSettings, WorkingHours
from tenant_events.auth.secret_store import MemorySecretStore
from tenant_events.settings import Settings, save_settings
from tenant_events.ui.alerts.rule_form import KEPT_TIP
from tenant_events.ui.look.theme import apply_theme
from tenant_events.ui.settings.settings_dialog import SettingsDialog

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore(*QT_OFFSCREEN_NOISE)]
AROUND_THE_CLOCK = WorkingHours(start="00:00", end="00:00", days=list(WEEKDAYS))
BROKEN = {"id": "mine", "name": "Mine", "types": ["user.nothing"]}
_visits: list[asyncio.Future[str]] = []


def browser(url: str) -> None:
    _visits.append(asyncio.ensure_future(asyncio.to_thread(act_as_browser, url)))


def _select(page, name: str) -> None:
    for row in range(page.list.count()):
        if page.list.item(row).text().startswith(name):
            page.list.setCurrentRow(row)
            return
    raise AssertionError(f"no rule {name!r} in the list")


def test_rules_editor_validates_next_to_the_field_and_keeps_what_was_saved(qtbot):
    d = SettingsDialog(Settings(alerts=AlertSettings(rules=[BROKEN])), set())
    qtbot.addWidget(d)
    d.show()
    page, form = d.rules_page, d.rules_page.form
    d.tabs.setCurrentWidget(page)
    texts = [page.list.item(r).text() for r in range(page.list.count())]
    assert texts[0] == "Mass deletion (critical)" and len(texts) == 17  # 16 built-in rules, the broken one
    assert texts[-1].startswith("⚠ alert rule 'mine': types:") and "matches no event type" in texts[-1]

    _select(page, "Mass deletion")
    assert form.use_threshold.isChecked() and form.count.value() == 20
    form.count.setValue(1)
    assert form.errors["threshold"].isVisible()
    assert form.errors["threshold"].text() == "threshold.count: Input should be greater than or equal to 2"
    emitted: list[Settings] = []
    d.settings_changed.connect(emitted.append)
    assert d.apply() is False and emitted == []
    form.count.setValue(30)
    assert not form.errors["threshold"].isVisible()
    form.types.setText("user.deleted, user.nope")
    assert "'user.nope' matches no event type" in form.errors["types"].text()
    form.types.setText("user.deleted, group.deleted")
    form.conditions.setPlainText("object.user.email contains")
    assert "contains needs a value" in form.errors["conditions"].text()
    form.conditions.setPlainText("object.user.email resembles x")
    assert "line 1" in form.errors["conditions"].text()
    form.conditions.setPlainText("")

    _select(page, "Changes outside working hours")
    page.list.currentItem().setCheckState(Qt.CheckState.Unchecked)
    page.add_button.click()
    form.name.setText("Sign-ups from a partner")
    form.types.setText("user.created")
    form.conditions.setPlainText("object.user.email ends_with @partner.example")
    form.severity.setCurrentIndex(0)
    form.resize(form.sizeHint())
    d.resize(1600, 900)
    save_screenshot(d, "rules-editor-light")
    assert d.apply() is True
    rules = emitted[-1].alerts.rules
    by_id = {e["id"]: e for e in rules if isinstance(e, dict)}
    assert by_id["mass-deletion"] == {
        "id": "mass-deletion",
        "types": ["user.deleted", "group.deleted"],
        "threshold": {"count": 30, "window_seconds": 60.0, "per_type": True},
    }
    assert by_id["off-hours"] == {"id": "off-hours", "enabled": False}
    mine = by_id["my-rule-1"]
    assert mine["name"] == "Sign-ups from a partner" and mine["severity"] == "info"
    assert mine["conditions"] == [
        {"field": "object.user.email", "op": "ends_with", "value": "@partner.example"}
    ]
    assert BROKEN in rules  # the invalid entry of the file is still there, as it was


def test_test_against_history_on_the_stored_events(qloop, qapp, ui_paths, make_simulator):
    # no live traffic and no test-purpose events: which organization an acted-out connection change picks, and
    # which event the simulator's draw makes a test one, depend on how much live traffic came first (on a loaded
    # machine the change once went to an organization the live traffic had just created, which is onboarding,
    # and the rules rightly skip test events)
    sim = make_simulator(seed=8, backlog=0, rate=0.0, heartbeat=0.2, test_purpose_every=0)
    save_settings(ui_paths, Settings(alerts=AlertSettings(working_hours=AROUND_THE_CLOCK)))

    async def scenario() -> None:
        async with running_app(ui_paths, opener=browser, secret_store=MemorySecretStore()) as app:
            session = await app.add_tenant(profile_for(sim, "acme"))
            await until(lambda: session.status.state.value == "live", 30, "live")
            for _ in range(2):
                await asyncio.to_thread(sim.scenario, "org_deleted")
            await until(lambda: app.alerts.unread == 1, 20, "the alert")
            book = app.alerts.book
            await until(lambda: book.entries()[0].alert.event_count == 2, 20, "both deletions")
            app.open_settings()
            d = app.settings_dialog
            assert d is not None
            page = d.rules_page
            d.tabs.setCurrentWidget(page)
            _select(page, "Temporary elevation")  # its 5 shipped fixtures (group roles too) run as shown
            await until(lambda: page.fixtures_result.text() == "Fixtures: all 5 pass", 30, "the fixtures")
            _select(page, "Organization deleted")
            assert page.test_button.isEnabled()
            page.test_button.click()
            await until(lambda: "would" in page.test_result.text(), 20, "the trial")
            await until(lambda: page.fixtures_result.text() == "Fixtures: all 2 pass", 30, "its fixtures")
            assert (
                page.test_result.text()
                == (
                    "acme: would have fired 2 times in the last 7 days (2 notifications, 2 events)"  # a warning said again
                )
            )
            _select(page, "Burst of sign-ups")
            page.test_button.click()
            await until(lambda: "would" in page.test_result.text(), 20, "the second trial")
            assert page.test_result.text() == "acme: would not have fired in the last 7 days"
            # a change made here runs at once: the connection rule made critical, then acted out
            _select(page, "Organization connection changed")
            page.form.severity.setCurrentIndex(2)
            changed = signal_future(d.settings_changed, 10)
            d.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
            await changed
            await until(lambda: app.settings.alerts.rules, 10, "applied")
            await asyncio.to_thread(sim.scenario, "org_connection", action="added")
            await until(lambda: app.alerts.unread == 2, 20, "the connection alert")
            assert book.entries()[0].alert.rule_id == "org-connection"
            assert book.entries()[0].alert.severity == "critical"
            await session.link.rules.runner.drain()
            assert len(book.entries()) == 2  # the new rules did not raise the earlier alert again
            apply_theme(qapp, "dark")
            try:
                app.open_settings()
                dark = app.settings_dialog
                assert dark is not None and dark is not d
                dark.tabs.setCurrentWidget(dark.rules_page)
                _select(dark.rules_page, "Admin role assigned")
                dark.resize(1600, 900)
                save_screenshot(dark, "rules-editor-dark")
                dark.reject()
                assert not d.isVisible()
            finally:
                apply_theme(qapp, "light")

    run_async(qloop, scenario(), timeout=120)
    for v in _visits:
        v.cancel()


def test_a_failing_fixture_is_named_beside_the_history_test():
    from tenant_events.alerts.fixtures import FixtureResult
    from tenant_events.ui.alerts.rules_page import fixtures_text

    ok = FixtureResult("mine", "the CEO deleted", "fires", 1)
    bad = FixtureResult("mine", "someone else deleted", "quiet", 2)
    assert fixtures_text([ok]) == "Fixtures: all 1 pass"
    assert (
        fixtures_text([ok, bad]) == "Fixtures: 1 of 2 fail — someone else deleted (expected: quiet; fired 2×)"
    )


def test_closing_the_dialog_while_its_fixtures_run_drops_their_result(qloop):
    # the fixtures run on a worker thread; the dialog is closed and deleted before they end, as a user closes
    # Settings right after picking a rule: their result must not be written into the deleted page (not shown
    # here: closing the only window would end the test's event loop)
    d = SettingsDialog(Settings(), set())

    async def scenario() -> None:
        page = d.rules_page
        d.tabs.setCurrentWidget(page)
        _select(page, "Temporary elevation")
        task = page._fixtures_task
        assert task is not None and not task.done()
        destroyed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        page.destroyed.connect(lambda *_: destroyed.done() or destroyed.set_result(None))
        d.deleteLater()
        await asyncio.wait_for(destroyed, 10)
        await asyncio.wait_for(task, 30)  # ends quietly: no "Internal C++ object already deleted"

    run_async(qloop, scenario(), timeout=60)


EITHER = {
    "id": "either",
    "name": "Either",
    "types": ["user.created"],
    "any_of": [
        {"field": "object.email_verified", "op": "equals", "value": "false"},
        {"field": "object.email", "op": "ends_with", "value": ["@a.example", "@b.example"]},
    ],
}
NOT_EITHER = {
    "id": "not-either",
    "name": "Not either",
    "types": ["user.created"],
    "any_of": [
        {"field": "object.name", "op": "contains", "value": "bot", "negate": True},
        {"field": "object.email", "op": "exists"},
    ],
}


def test_alternatives_are_lines_of_the_conditions_or_kept_as_they_are(qtbot):
    d = SettingsDialog(Settings(alerts=AlertSettings(rules=[EITHER, NOT_EITHER])), set())
    qtbot.addWidget(d)
    d.show()
    page, form = d.rules_page, d.rules_page.form
    d.tabs.setCurrentWidget(page)
    emitted: list[Settings] = []
    d.settings_changed.connect(emitted.append)

    _select(page, "Sign-ups of unverified or throwaway accounts")
    assert form.conditions.toPlainText() == (
        "one of: object.email_verified equals false\n"
        "one of: object.email domain_in_list disposable-email-domains"
    )
    assert not form.conditions.isReadOnly()
    form.count.setValue(25)

    _select(page, "Either")
    assert (
        form.conditions.toPlainText().splitlines()[-1]
        == "one of: object.email ends_with @a.example, @b.example"
    )
    form.name.setText("Either kind")
    form.conditions.setPlainText(form.conditions.toPlainText() + "\none of: object.role.name exists")
    assert "any_of.2.field: no event of the rule's types" in form.errors["conditions"].text()
    form.conditions.setPlainText(
        form.conditions.toPlainText().rsplit("\n", 1)[0] + "\none of: object.nickname missing"
    )
    assert not form.errors["conditions"].isVisible()

    # "not" cannot be said in a line: the alternatives stay as they are, read-only, and an edit keeps them
    _select(page, "Not either")
    assert form.conditions.isReadOnly() and form.conditions.toolTip() == KEPT_TIP
    form.name.setText("Not either, renamed")

    page.add_button.click()
    form.name.setText("Mine")
    form.types.setText("user.created")
    form.conditions.setPlainText(
        "object.user_id starts_with auth0|\none of: object.email_verified equals false\n"
        "ONE OF: object.email contains +bulk"
    )
    assert d.apply() is True
    by_id = {e["id"]: e for e in emitted[-1].alerts.rules}
    assert by_id["signup-wave"] == {
        "id": "signup-wave",
        "threshold": {"count": 25, "window_seconds": 300.0, "per_type": False},
    }
    assert by_id["either"]["name"] == "Either kind" and by_id["either"]["any_of"] == [
        *EITHER["any_of"],
        {"field": "object.nickname", "op": "missing"},
    ]
    assert by_id["not-either"]["name"] == "Not either, renamed"
    assert by_id["not-either"]["any_of"] == NOT_EITHER["any_of"]
    assert by_id["my-rule-1"]["conditions"] == [
        {"field": "object.user_id", "op": "starts_with", "value": "auth0|"}
    ]
    assert by_id["my-rule-1"]["any_of"] == [
        {"field": "object.email_verified", "op": "equals", "value": "false"},
        {"field": "object.email", "op": "contains", "value": "+bulk"},
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_form_shows_only_what_the_rule_has_and_what_applies_to_it(qapp, qtbot, theme):
    """A rule with no conditions shows an empty box that says so (not a greyed example that reads as the rule's
    own conditions); "Group firings within" shows for every kind of rule: a single event's, a threshold's and a
    sequence's firing each join the open alert as its next version within that bound of its raise."""
    from tenant_events.ui.alerts.rule_form import NO_CONDITIONS, parse_conditions

    apply_theme(qapp, theme)
    try:
        d = SettingsDialog(Settings(), set())
        qtbot.addWidget(d)
        d.resize(1100, 760)
        d.show()
        page, form = d.rules_page, d.rules_page.form
        d.tabs.setCurrentWidget(page)

        def coalesce_shown() -> bool:
            return form.coalesce.isVisibleTo(d)

        _select(page, "Mass deletion")  # a threshold, no conditions
        assert form.use_threshold.isChecked() and form.conditions.toPlainText() == ""
        assert form.conditions.placeholderText() == NO_CONDITIONS
        assert parse_conditions(NO_CONDITIONS)[2]  # not something the box would take as a condition
        assert coalesce_shown()
        save_screenshot(d, f"rule-form-threshold-{theme}")
        _select(page, "Admin role assigned")  # one event fires it: later ones join its open alert
        assert not form.use_threshold.isChecked() and coalesce_shown()
        assert form.conditions.toPlainText() != ""  # its own conditions, as text
        save_screenshot(d, f"rule-form-single-event-{theme}")
        _select(page, "Temporary elevation")  # a sequence: a completion soon after joins its open alert too
        assert coalesce_shown()
    finally:
        apply_theme(qapp, "light")


def test_trying_a_rules_fixtures_logs_no_database_lines(qloop, qtbot, caplog):
    """Each rule shown runs its fixtures on databases made for them: nothing in the log at INFO (it logged
    "database fixture.sqlite3 migrated to schema 1…5", fifteen lines each time)."""
    import logging

    caplog.set_level(logging.INFO, logger="tenant_events.store.schema")
    d = SettingsDialog(Settings(), set())
    qtbot.addWidget(d)
    d.show()
    page = d.rules_page
    d.tabs.setCurrentWidget(page)

    async def scenario() -> None:
        for name in ("Mass deletion", "Account linked to another identity"):
            _select(page, name)
            page.run_fixtures()  # (as selecting it does; the first is selected already as the page opens)
            await until(
                lambda: (
                    "fixtures" in page.fixtures_result.text().lower()
                    and "Running" not in page.fixtures_result.text()
                ),
                30,
                f"the fixtures of {name}",
            )

    run_async(qloop, scenario())
    assert [r.getMessage() for r in caplog.records if r.name == "tenant_events.store.schema"] == []


def test_a_history_test_answering_after_another_rule_is_chosen_is_not_shown_under_it(qloop):
    """ "Test against history" reads the stores (seconds over a year); the user picks another rule meanwhile: the
    first rule's answer must not be shown under the second. The trial is held on an event until the test lets it
    go, after the choice."""
    import threading

    d = SettingsDialog(Settings(), set())
    release = threading.Event()

    def trial(name: str) -> str:
        assert release.wait(30), "the trial was never let go"
        return f"acme: {name} would have fired 2 times in the last 7 days"

    async def tester(rule) -> str:
        return await asyncio.to_thread(trial, rule.name)

    async def scenario() -> None:
        page = d.rules_page
        page.set_tester(tester)
        d.tabs.setCurrentWidget(page)
        _select(page, "Organization deleted")
        page.test_button.click()
        trying = page._task
        assert trying is not None and not trying.done()
        _select(page, "Burst of sign-ups")
        release.set()
        await asyncio.wait_for(trying, 30)
        assert page.test_result.text() == "", "the answer for the rule chosen before"
        page.test_button.click()
        await until(lambda: "would" in page.test_result.text(), 20, "the second rule's trial")
        assert page.test_result.text().startswith("acme: Burst of sign-ups would")

    try:
        run_async(qloop, scenario(), timeout=60)
    finally:
        release.set()
        d.deleteLater()
