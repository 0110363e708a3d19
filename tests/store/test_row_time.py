"""The stored time text and milliseconds are the same whether the engine's fast path keeps the received text
(canonical `…T…:SS.mmmZ`) or the row formats the parsed datetime (any other RFC 3339 form)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from helpers.events_factory import frame
from tenant_events.store import EventRow
from tenant_events.wire import EventMessage, decode_frame_timed

_moments = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
_offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))


def _row(when_text: str) -> tuple[EventRow, EventRow]:
    name, data = frame(1)
    data = data.replace('"time":"2026-11-01T00:00:01Z"', f'"time":"{when_text}"')
    assert when_text in data
    message, text = decode_frame_timed(name, data)
    assert isinstance(message, EventMessage) and text == when_text
    return EventRow.from_message(message, data, 0.0, text), EventRow.from_message(message, data, 0.0)


@given(_moments)
def test_the_canonical_text_is_kept_and_its_milliseconds_are_exact(moment: datetime) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    fast, slow = _row(text)
    assert fast.time == slow.time == text
    assert (
        fast.time_ms
        == slow.time_ms
        == (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    )


@given(_moments, _offsets, st.sampled_from(["seconds", "milliseconds", "microseconds"]))
def test_other_forms_are_normalised_to_utc_milliseconds(moment: datetime, tz: timezone, spec: str) -> None:
    local = moment.astimezone(tz)
    text = local.isoformat(timespec=spec)
    fast, slow = _row(text)
    assert fast == slow
    sent = datetime.fromisoformat(text).astimezone(UTC)  # what the text says, to its precision
    expected = sent.replace(microsecond=sent.microsecond // 1000 * 1000)
    assert fast.time == expected.strftime("%Y-%m-%dT%H:%M:%S.") + f"{expected.microsecond // 1000:03d}Z"
    assert fast.time_ms == (expected - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
