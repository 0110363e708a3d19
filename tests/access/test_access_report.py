"""The auditors' page (access/report.py) from the story of helpers/access_story.py: the tenant, the moment or
moments, the filters by name, how complete the answer is (always, with the possible gap in the range), the counts
and the lists; and for a moment before the history, that it cannot be known instead of an empty list."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from helpers.access_story import ADMIN, AFTER, BEFORE, write_story
from tenant_events.access.filters import AccessFilter
from tenant_events.access.report import report_html
from tenant_events.access.review import AccessReview
from tenant_events.store.access_reader import AccessReader

MADE = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _text(page: str) -> str:
    """The page's words, as a reader sees them."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.split("</style>", 1)[1])))


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "acme.sqlite3"
    write_story(path)
    with AccessReader(path) as reader:
        yield AccessReview("acme", reader)


def test_a_moment_narrowed_to_a_role(review):
    flt = AccessFilter(role=ADMIN)
    text = _text(report_html(flt.snapshot(review.at(_ms(BEFORE))), flt, MADE))
    assert "Access review — acme Who held access at 2026-11-01 12:00:50 UTC" in text
    assert "Tenant acme Moment 2026-11-01 12:00:50 UTC Filters role admin (rol_admin0001)" in text
    assert (
        "How complete this is History complete from 2026-11-01 12:00:00 UTC (the first stored event); access given "
        "before then and not changed since is not known. No possible gap inside the range." in text
    )
    assert "Counts 3 grants: 3 roles (3 admin-like), 0 connections; 1 organization, 1 group, 2 users" in text
    assert (
        "organization Stark Industries (org_stark000000001) Access Since Event member grace@example.com has role admin"
        in text
    )
    assert "Prepared 2026-11-02 09:30:00 UTC by Tenant Events" in text


def test_changes_name_the_gap_in_their_range_and_each_event(review):
    diff = review.diff(_ms(BEFORE), _ms(AFTER))
    text = _text(report_html(diff, AccessFilter(), MADE))
    assert "From 2026-11-01 12:00:50 UTC To 2026-11-01 12:03:20 UTC Filters none: all access" in text
    assert (
        "Possible gap: events from 2026-11-01 12:01:30 UTC to 2026-11-01 12:01:40 UTC may be missing (cursor "
        "expired: the stream's position was lost)." in text
    )
    assert (
        "6 changes: 2 granted, 2 removed, 0 joined, 1 left, 0 connection added, 1 connection removed" in text
    )
    assert (
        "2026-11-01 12:01:40 UTC removed grace@example.com lost role admin in organization Stark Industries "
        "grace@example.com removed from organization Stark Industries organization.member.deleted "
    ) in text
    assert "by Backoffice Script (cli_backoffice) from 203.0.113.7" in text


def test_a_moment_before_the_history_says_it_cannot_be_known(review):
    text = _text(report_html(review.at(_ms(BEFORE.replace(year=2025))), AccessFilter(), MADE))
    assert (
        "Who held access at 2025-11-01 12:00:50 UTC cannot be known: the stored history starts at "
        "2026-11-01 12:00:00 UTC." in text
    )
    assert "Counts" not in text and "Organizations" not in text  # no list that would read as "nobody"
