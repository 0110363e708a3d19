"""The follow state machine, transition by transition: every command and fact from every mode, with what the
window must do after it (view/follow_state.py; the window's side is tests/ui/window/test_follow_states.py)."""

from __future__ import annotations

import pytest

from tenant_events.view.follow_state import PAST_SAY, STAY, FollowState, Mode, Moves

NEWEST = Moves(to_top=True, unpick=True, all_seen=True)  # LIVE from a command, looked at, not held


def machine(mode: Mode, looking: bool = True, held: bool = False) -> FollowState:
    s = FollowState()
    s.mode, s.looking, s.held = mode, looking, held
    return s


# -- the pill and N ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [Mode.LIVE, Mode.READING])
def test_pill_or_n_goes_to_the_newest_follows_and_drops_the_picked_row(mode):
    s = machine(mode)
    assert s.jump() == NEWEST and s.mode is Mode.LIVE and s.following


def test_pill_or_n_while_the_window_is_not_looked_at_counts_nothing_as_seen():
    s = machine(Mode.READING, looking=False)
    assert s.jump() == Moves(to_top=True, unpick=True) and s.following


def test_n_in_a_past_range_only_goes_to_its_newest_row():
    s = machine(Mode.PAST)
    assert s.jump() == Moves(to_top=True) and s.mode is Mode.PAST and not s.following


# -- F ----------------------------------------------------------------------------------------------------------
def test_f_while_following_stops_where_the_view_is():
    s = machine(Mode.LIVE)
    assert s.toggle() == STAY and s.mode is Mode.READING and not s.following


def test_f_while_reading_follows_from_the_newest():
    s = machine(Mode.READING)
    assert s.toggle() == NEWEST and s.mode is Mode.LIVE


def test_f_in_a_past_range_says_why_and_stays_off():
    s = machine(Mode.PAST)
    assert s.toggle() == Moves(say=PAST_SAY) and s.mode is Mode.PAST and not s.following


# -- a row picked ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mode", "after"), [(Mode.LIVE, Mode.READING), (Mode.READING, Mode.READING), (Mode.PAST, Mode.PAST)]
)
def test_a_row_click_or_j_k_reads_that_row(mode, after):
    s = machine(mode)
    assert s.picked() == STAY and s.mode is after and not s.following


# -- the user scrolling ------------------------------------------------------------------------------------------
def test_scrolling_away_from_the_newest_stops_following():
    s = machine(Mode.LIVE)
    assert s.scrolled(at_top=False, picked=False) == STAY and s.mode is Mode.READING


def test_a_scroll_that_stays_at_the_top_keeps_following():
    s = machine(Mode.LIVE)
    assert s.scrolled(at_top=True, picked=False) == STAY and s.mode is Mode.LIVE


def test_scrolling_back_to_the_newest_with_no_row_picked_follows_again():
    s = machine(Mode.READING)
    assert s.scrolled(at_top=True, picked=False) == Moves(all_seen=True) and s.mode is Mode.LIVE


def test_scrolling_to_the_top_with_a_row_picked_keeps_reading_it():
    s = machine(Mode.READING)
    assert s.scrolled(at_top=True, picked=True) == STAY and s.mode is Mode.READING


def test_scrolling_in_a_past_range_changes_nothing():
    s = machine(Mode.PAST)
    assert s.scrolled(at_top=True, picked=False) == STAY and s.mode is Mode.PAST


# -- filter change, zoom, tenant ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(Mode))
def test_a_new_filter_keeping_no_row_shows_the_newest_followed(mode):
    s = machine(mode)
    assert s.reset(range_open=True, kept=False) == Moves(to_top=True, all_seen=True)
    assert s.mode is Mode.LIVE


@pytest.mark.parametrize("mode", list(Mode))
def test_a_new_filter_keeping_the_row_being_read_reads_on(mode):
    s = machine(mode)
    assert s.reset(range_open=True, kept=True) == STAY and s.mode is Mode.READING


@pytest.mark.parametrize("mode", list(Mode))
def test_a_zoom_into_a_range_that_ended_is_past_whatever_came_before(mode):
    s = machine(mode)
    assert s.reset(range_open=False, kept=False) == Moves(to_top=True)
    assert s.mode is Mode.PAST and not s.following
    s = machine(mode)
    assert s.reset(range_open=False, kept=True) == STAY and s.mode is Mode.PAST


def test_leaving_a_past_range_follows_again():
    s = machine(Mode.PAST)
    s.reset(range_open=True, kept=False)
    assert s.following


# -- the window hidden and shown (or left for another window) ----------------------------------------------------
def test_the_window_looked_at_again_while_following_has_seen_everything():
    s = machine(Mode.LIVE, looking=False)
    assert s.look(True) == Moves(to_top=True, all_seen=True) and s.looking


@pytest.mark.parametrize("mode", [Mode.READING, Mode.PAST])
def test_the_window_looked_at_again_while_reading_moves_nothing(mode):
    s = machine(mode, looking=False)
    assert (
        s.look(True) == STAY and s.mode is mode
    )  # only the rows on screen are seen (the window counts them)


def test_the_window_looked_at_again_with_the_pointer_on_the_rows_moves_nothing_and_is_seen():
    s = machine(Mode.LIVE, looking=False, held=True)
    assert s.look(True) == Moves(all_seen=True)  # following: nothing is new, though nothing moves


@pytest.mark.parametrize("mode", list(Mode))
def test_the_window_hidden_or_left_keeps_the_mode(mode):
    s = machine(mode)
    assert s.look(False) == STAY and s.mode is mode and not s.looking


def test_looked_at_twice_is_nothing_new():
    s = machine(Mode.LIVE)
    assert s.look(True) == STAY


# -- the pointer on the rows -------------------------------------------------------------------------------------
def test_the_pointer_on_the_rows_holds_them_and_leaving_brings_the_waiting_rows_in():
    s = machine(Mode.LIVE)
    assert s.hold(True) == STAY and s.held and s.following
    # nothing moves under the pointer; the rows wait above (the pill says so) but are not "new" in the title and
    # the tray: the reader follows the newest and is looking
    assert s.arrived() == Moves(keep_place=True, all_seen=True)
    assert s.hold(False) == Moves(to_top=True, all_seen=True) and s.following


def test_rows_waiting_under_the_pointer_of_a_window_not_looked_at_stay_new():
    s = machine(Mode.LIVE, looking=False, held=True)
    assert s.arrived() == Moves(keep_place=True)


def test_the_pointer_leaving_a_window_not_looked_at_counts_nothing_seen():
    s = machine(Mode.LIVE, looking=False, held=True)
    assert s.hold(False) == Moves(to_top=True)


@pytest.mark.parametrize("mode", [Mode.READING, Mode.PAST])
def test_the_pointer_leaving_while_reading_moves_nothing(mode):
    s = machine(mode, held=True)
    assert s.hold(False) == STAY


# -- rows arriving -----------------------------------------------------------------------------------------------
def test_rows_arriving_while_following_and_looked_at_are_seen_at_once():
    assert machine(Mode.LIVE).arrived() == Moves(to_top=True, all_seen=True)


def test_rows_arriving_while_following_unlooked_scroll_in_but_stay_new():
    assert machine(Mode.LIVE, looking=False).arrived() == Moves(to_top=True)


@pytest.mark.parametrize("mode", [Mode.READING, Mode.PAST])
def test_rows_arriving_while_reading_keep_every_row_in_place(mode):
    assert machine(mode).arrived() == Moves(keep_place=True)


# -- the whole story of the report: the pill clicked, then rows, N, F ----------------------------------------------
def test_after_the_pill_follow_means_follow():
    s = FollowState()
    s.look(True)
    s.scrolled(at_top=False, picked=False)
    s.arrived()
    assert s.jump() == NEWEST  # the pill: the newest, no row picked
    for _ in range(5):
        assert s.arrived() == Moves(to_top=True, all_seen=True)
    assert s.toggle() == STAY and not s.following  # F: off where it is
    assert s.jump() == NEWEST and s.following  # N: on again
