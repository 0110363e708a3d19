"""The byte-level SSE decoder against the WHATWG parsing rules, fed whole, split at every byte, and re-ended."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tenant_events.stream.sse_decoder import SSEDecoder, SSEFrame


def decode(
    body: bytes, cuts: list[int] | None = None, limit: int = 1 << 20
) -> tuple[list[SSEFrame], SSEDecoder]:
    decoder = SSEDecoder(limit)
    points = sorted({0, len(body), *(cuts or [])})
    out: list[SSEFrame] = []
    for a, b in itertools.pairwise(points):
        out += decoder.feed(body[a:b])
    return out, decoder


def every_split(body: bytes, limit: int = 1 << 20) -> list[list[SSEFrame]]:
    """The frames for the body whole, cut at each single byte, and fed one byte at a time."""
    results = [decode(body, limit=limit)[0]]
    results += [decode(body, [i], limit=limit)[0] for i in range(1, len(body))]
    results.append(decode(body, list(range(len(body))), limit=limit)[0])
    return results


SPEC_STREAM = (  # the shape of the service's own example: kind in `event:`, offset in `id:`, JSON in `data:`
    b":connected\nretry: 5000\n\n"
    b'event: user.created\nid: b2Zmc2V0MQ\ndata: {"offset":"b2Zmc2V0MQ","event":{}}\n\n'
    b'event: offset-only\nid: b2Zmc2V0Mg\ndata: {"offset":"b2Zmc2V0Mg"}\n\n'
)


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_spec_frames_decode_the_same_at_every_split_and_line_ending(eol: bytes) -> None:
    body = SPEC_STREAM.replace(b"\n", eol)
    expected = [
        SSEFrame("user.created", '{"offset":"b2Zmc2V0MQ","event":{}}', "b2Zmc2V0MQ"),
        SSEFrame("offset-only", '{"offset":"b2Zmc2V0Mg"}', "b2Zmc2V0Mg"),
    ]
    for frames in every_split(body):
        assert frames == expected
    _, decoder = decode(body)
    assert decoder.retry == 5000 and decoder.comments == 1


def test_mixed_line_endings_and_a_crlf_split_between_chunks() -> None:
    body = b"event: a\r\ndata: 1\r\rdata: 2\n\r\nevent: c\rdata: 3\r\n\n"
    for frames in every_split(body):
        assert [(f.event, f.data) for f in frames] == [("a", "1"), ("", "2"), ("c", "3")]


def test_data_lines_join_with_newline_and_one_space_is_dropped() -> None:
    body = b"data:first\ndata:  second\ndata\ndata: \n\n"
    assert decode(body)[0] == [SSEFrame("", "first\n second\n\n", "")]


def test_a_frame_without_data_is_not_dispatched_and_the_event_name_resets() -> None:
    frames, _ = decode(b"event: lonely\n\ndata: x\n\n")
    assert frames == [SSEFrame("", "x", "")]


def test_last_event_id_persists_and_an_id_with_nul_is_ignored() -> None:
    frames, decoder = decode(b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n")
    assert [f.id for f in frames] == ["1", "1", "1", ""]
    assert decoder.last_event_id == ""


def test_retry_takes_only_ascii_digits() -> None:
    for value, expected in [(b"250", 250), (b"25x", None), (b"-1", None), (b"\xd9\xa3", None), (b"", None)]:
        assert decode(b"retry: " + value + b"\n\n")[1].retry == expected


def test_a_leading_bom_is_dropped_once_even_split() -> None:
    body = b"\xef\xbb\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n"
    for frames in every_split(body):
        assert [f.data for f in frames] == ["a"]  # the second BOM makes the field name "\ufeffdata": ignored


def test_an_unfinished_frame_at_eof_is_not_dispatched() -> None:
    assert decode(b"data: a\n\ndata: b\n")[0] == [SSEFrame("", "a", "")]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert decode(b"event: x\ndata: \xff\xfeok\n\n")[0] == [SSEFrame("x", "\ufffd\ufffdok", "")]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
def test_an_oversized_frame_is_reported_with_its_start_and_the_stream_goes_on(eol: bytes) -> None:
    big = b"event: user.updated" + eol + b"id: off9" + eol + b"data: " + b"x" * 5000 + eol + eol
    body = big + b"data: after" + eol + eol
    for cuts in ([], [100], list(range(0, len(body), 7)), [len(big) - 1]):
        frames, decoder = decode(body, cuts, limit=1000)
        assert [f.data for f in frames][1:] == ["after"]
        first = frames[0]
        assert first.event == "user.updated" and first.id == "off9" and first.oversized >= 5000
        assert set(first.data) == {"x"} and len(first.data) <= 5000
        assert sum(len(p) for p in decoder._parts) == 0


def test_memory_stays_bounded_for_a_line_that_never_ends() -> None:
    decoder = SSEDecoder(1000)
    decoder.feed(b"data: ")
    for _ in range(1000):
        assert decoder.feed(b"y" * 4096) == []
        assert decoder._size <= 1000 + 4096  # one chunk past the cap at most, then only a counter
    assert decoder._discard is not None and decoder._discard.size > 4_000_000
    assert len(decoder._discard.head) < 80_000


@given(
    frames=st.lists(
        st.tuples(
            st.sampled_from(["", "user.created", "offset-only"]),
            st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=40),
        ),
        max_size=8,
    ),
    eol=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(0, 2000), max_size=10),
)
def test_any_rendered_stream_round_trips(frames: list[tuple[str, str]], eol: str, cuts: list[int]) -> None:
    body = "".join(
        (f"event: {name}{eol}" if name else "") + f": note{eol}data: {data}{eol}{eol}"
        for name, data in frames
    ).encode()
    got, _ = decode(body, [c % (len(body) + 1) for c in cuts])
    assert [(f.event, f.data) for f in got] == frames


FIELD = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=30)


@given(event=FIELD, sse_id=FIELD, data=FIELD)
def test_the_common_frame_shortcut_equals_the_general_parse(event: str, sse_id: str, data: str) -> None:
    """`event:`/`id:`/`data:` frames take a one-regex path; a leading comment forces the line loop."""
    frame = f"event: {event}\nid: {sse_id}\ndata: {data}\n\n".encode()
    fast, fast_decoder = decode(b"id: before\n\n" + frame)
    slow, slow_decoder = decode(b"id: before\n\n:\n" + frame)
    assert fast == slow
    assert fast_decoder.last_event_id == slow_decoder.last_event_id


@given(
    frames=st.lists(
        st.tuples(st.sampled_from(["", "user.created"]), st.lists(FIELD, min_size=1, max_size=3)), max_size=6
    ),
    eol=st.sampled_from(["\n", "\r", "\r\n"]),
    cuts=st.lists(st.integers(0, 2000), max_size=10),
)
def test_each_frame_lies_line_by_line_in_the_span_it_was_cut_from(
    frames: list[tuple[str, list[str]]], eol: str, cuts: list[int]
) -> None:
    """The engine looks at a whole read's numbers once, in `span` (stream/event_rows.py): that holds only if every
    line of every frame's data is in the span of the feed that returned the frame."""
    body = "".join(
        (f"event: {name}{eol}" if name else "") + "".join(f"data: {line}{eol}" for line in lines) + eol
        for name, lines in frames
    ).encode()
    decoder = SSEDecoder(1 << 20)
    points = sorted({0, len(body), *(c % (len(body) + 1) for c in cuts)})
    seen = []
    for a, b in itertools.pairwise(points):
        for frame in decoder.feed(body[a:b]):
            seen.append(frame.data)
            for line in frame.data.split("\n"):
                assert line.encode() in decoder.span
    assert seen == ["\n".join(lines) for _, lines in frames]
