"""Suite-wide settings: Qt offscreen unless the session has an X display; shared fixtures from tests/helpers;
how the suite splits across pytest-xdist workers, and the quick lane (`--quick`).

Each area keeps its shared fixtures in `tests/helpers/fixtures_<area>.py`; every such module is loaded here
as a plugin, so areas add fixtures without editing this file.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from helpers.slack import bound
from helpers.worker_session import start_for_this_worker

start_for_this_worker()  # before anything reads DISPLAY or the session bus

# Hypothesis times nothing here: its deadline and its "input generation is slow" check measure the machine, and a
# loaded one (two other heavy jobs beside eight workers) failed them with nothing wrong in the code.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "xcb")
os.environ.setdefault("QT_API", "pyside6")

pytest_plugins = sorted(
    f"helpers.{p.stem}" for p in (Path(__file__).parent / "helpers").glob("fixtures_*.py")
)

# The quick lane: the Qt-free core, without a desktop session, hub servers, the Node peer, the proving ground's
# attacks and faults, or long runs.
QUICK_SKIPS_MARKS = ("gui", "dbus", "hub", "node", "slow")
QUICK_SKIPS_DIRS = ("ui", "packaging", "proving", "chaos")

# Tests (or whole files, by their path) that take five seconds or more on their own, measured on two cores, most
# of it watching a live simulator, a hub or a clock: marked `slow` here, in one list, so the quick lane leaves them
# out. The whole suite runs them (nothing skips them by default) and starts them first, longest first, so no long
# test is left running alone at the end while the other workers wait (the list is in that order, measured with
# `./run test --durations=0 --durations-min=4`).
SLOW = (
    "store/test_lake_access.py",  # relays, late viewers, ten kills, PostgreSQL: ~200 s each of two in a whole run
    "ui/app/test_neighbours_app.py",  # every command beside the app, run and killed: ~130 s on a loaded machine
    "proving/test_neighbours_stream.py",  # the same beside `stream`: ~120 s
    "store/test_tiers_agree.py",  # ~70 s on a loaded machine
    "hub/test_team_archive_hub.py",  # two relays, two viewers, PostgreSQL: ~50-70 s
    "store/test_team_archive.py",  # PostgreSQL, ten kill rounds, viewer processes, over a folder and S3: ~60 s
    "store/test_team_archive_s3.py",  # the S3 server's refusals, the CLI over a bucket: ~30 s
    "store/test_archive_move.py::test_sigkill_at_any_moment_of_a_move_loses_and_doubles_nothing",  # ~60 s
    "hub/test_team_delivery_faults.py",  # a receiver down for 30 s: ~55 s
    "store/test_fts_merge.py",  # a move under one event every 0.1 s, until the index is merged: ~45 s
    "store/test_directory_settle.py",  # 36 simulated days kept in two stores, every read compared: ~30-60 s
    "store/test_settle_kill.py",  # ten kill rounds and more of settling, a reader all along: ~30 s
    "alerts/test_builtin_rules_live.py::test_ten_minutes_of_ordinary_demo_traffic_stay_quiet",  # ~30 s, twice
    "alerts/test_builtin_rules_live.py",
    "alerts/test_pack_budgets.py",  # a day of the demo's traffic (~245,000 events) made and evaluated: ~15-25 s
    "ui/window/test_focus_after_settings.py",  # Settings opened and closed five times, twice: ~25 s each
    "ui/settings/test_team_archive_setting.py::test_settings_saves_the_team_archive_and_reads_the_tenant_with_it",
    "cli/test_unreachable.py",
    "destinations/test_hostile_receivers.py::test_destinations_test_of_a_trickling_receiver_answers_within_the",
    "chaos/test_crash_safety.py::test_sigkill_rounds_keep_every_event_exactly_once_in_order",
    "stream/test_generators_closed.py::test_rotations_under_the_windows_qt_loop_print_nothing",
    "proving/test_proving_ground_cmd.py",
    "ui/alerts/test_alert_traffic.py",
    "proving/test_network_faults.py",
    "cli/test_sign_in_stays_with_its_tenant.py",
    "stream/test_generators_closed.py::test_rotations_stream_errors_drops_stalls_and_stop_print_nothing_under_a",
    "hub/test_cluster_failover.py",
    "store/test_query_store.py::test_random_queries_match_the_model",
    "store/test_access_history.py::test_every_moment_matches_the_model_whatever_the_delivery_order",  # ~20 s
    "hub/test_proving_hub_row.py",
    "hub/test_team_alert_takeover.py",
    "hub/test_stop_on_sigterm.py",  # three viewers, three streams and three relays started and stopped: ~20 s
    "store/test_access_settle.py",  # 36 simulated days, each stored, indexed and kept, in two stores: ~15 s
    "ui/app/test_gui_command.py::test_demo_command_end_to_end",
    "ui/app/test_demo_flow.py",
    "ui/alerts/test_inbox_window_states.py",
    "ui/alerts/test_alert_words.py",
    "ui/window/test_follow_states.py",
    "ui/app/test_rotation_status.py",
    "stream/test_no_reconnect_storm.py",
    "cli/test_alerts_cli.py::test_exactly_once_across_sigkill_restart_and_resent_events",
    "cli/test_correlation_exactly_once.py",
    "stream/test_state_lines.py",
    "proving/test_hostile_stream.py",
    "ui/app/test_keyring_first_run.py",
    "proving/test_disk_faults.py",
    "test_code_quality.py::test_mypy_strict_clean",
    "store/test_wal_bound.py::test_many_small_commits_with_busy_readers_keep_the_wal_under_its_bound",
    "destinations/test_webhook_delivery.py::test_a_slow_receiver_is_waited_for_and_holds_up_no_other_destination",
    "destinations/test_hostile_receivers.py::test_stream_exits_within_5_s_while_a_send_trickles",
    "hub/test_hub_attacks.py::test_a_watch_of_a_large_triage_bucket_sees_every_later_update",
    "simulator/test_scenarios.py::test_routine_live_traffic_leaves_out_the_incidents_and_speed_compresses_time",
    "auth/test_loopback_under_load.py",
    "query/test_query_parser.py::test_canonical_text_parses_back_to_the_same_tree",
    "store/test_directory.py::test_the_directory_agrees_with_the_simulated_tenants_world",
)
QUICK_SKIPS_FIXTURES = ("qapp", "qtbot", "qloop", "frozen_app", "dunst", "tray_host")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--quick",
        action="store_true",
        help="the edit loop: only the Qt-free core (no gui, dbus, hub, node or slow tests)",
    )


def _quick(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(mark) for mark in QUICK_SKIPS_MARKS):
        return False
    parts = Path(str(item.path)).relative_to(Path(__file__).parent).parts
    if parts[0] in QUICK_SKIPS_DIRS:
        return False
    return not set(QUICK_SKIPS_FIXTURES) & set(getattr(item, "fixturenames", ()))


def _xdist_group(item: pytest.Item) -> str | None:
    """Tests sharing a fixture that is costly to make run on one worker, so it is made once: the frozen bundle
    (built once per session), or a module's own fixture (a filled store, a streamed tenant)."""
    info = getattr(item, "_fixtureinfo", None)
    names = set(getattr(item, "fixturenames", ()))
    if names & {"frozen_dist", "frozen_app"}:
        return "frozen-bundle"
    if info is not None and any(defs[-1].scope == "module" for defs in info.name2fixturedefs.values()):
        return item.nodeid.split("::")[0]
    return None


def _group_in_node_id(item: pytest.Item) -> None:
    """`--dist loadgroup` reads a test's group from its node id (`…@group`), which pytest-xdist's worker appends
    by setting `item._nodeid`; pytest 9 builds node ids from `item._id` and no longer reads that, so no group
    reached the scheduler (every worker built the frozen bundle for itself, side by side). Append it here."""
    groups = sorted(
        {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
    )
    node_id = getattr(item, "_id", None)
    if not groups or node_id is None or "@" in item.nodeid.rsplit("]", 1)[-1]:
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


def _slow_rank(item: pytest.Item) -> int:
    """The item's place in SLOW (len(SLOW) when it is not listed)."""
    path = item.nodeid.removeprefix("tests/")
    return next((rank for rank, prefix in enumerate(SLOW) if path.startswith(prefix)), len(SLOW))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _slow_rank(item) < len(SLOW):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--quick"):
        kept = [item for item in items if _quick(item)]
        config.hook.pytest_deselected(items=[item for item in items if not _quick(item)])
        items[:] = kept
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            group = _xdist_group(item)
            if group:
                item.add_marker(pytest.mark.xdist_group(group))
    # The frozen bundle's build is the longest single step: its tests go first, so the other workers run the rest
    # of the suite meanwhile, and the build's minutes (more on a loaded machine) count against a longer limit.
    frozen = [item for item in items if _xdist_group(item) == "frozen-bundle"]
    for item in frozen:
        if not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(bound(900)))
    # pytest-timeout's limit (pyproject.toml) is a bound like any other: stretched on a loaded machine
    for item in items:
        if not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(bound(300)))
    rest = sorted(
        (item for item in items if item not in frozen), key=_slow_rank
    )  # (stable: the rest keep order)
    items[:] = frozen + rest
    if config.getoption("loadgroup", default=False):  # set on a pytest-xdist worker under --dist loadgroup
        for item in items:
            _group_in_node_id(item)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (imported modules, test items) lives all session: set it outside the cyclic
    collector's reach, so the full collections the Qt tests run after each test (fixtures_window.py) walk only
    what tests made. In a worker those walks took 0.15 s each, about 33 s of CPU over the window tests."""
    gc.collect()
    gc.freeze()
