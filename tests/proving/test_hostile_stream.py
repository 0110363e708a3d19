"""Hostile input on the SSE/wire path (proving ground): the real engine — httpx transport, httpx-sse parsing, wire
decoding, the store writer — fed bytes a test controls completely through httpx's MockTransport (the only
seam: `client_factory`). Arbitrary bytes, any split points, CR/LF/CRLF mixes, invalid UTF-8, deep JSON and
huge lines: the engine never crashes or hangs, keeps every malformed frame as rejected, stores every valid
event once, and is still working on the next connection.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.events_factory import frame
from tenant_events.store import EventReader, StoreWriter
from tenant_events.stream.engine import EngineConfig, StreamEngine
from tenant_events.stream.states import StateChange, StreamState
from tenant_events.stream.tokens import StaticTokenProvider

Body = Callable[[], AsyncIterator[bytes]]
SENTINEL = 999_999  # frame number of the valid event every run ends with
FUZZ = settings(
    max_examples=int(os.environ.get("PROVING_FUZZ_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def chunks_of(data: bytes, cuts: list[int]) -> Body:
    """The body split at the given points (each taken modulo the length), as the network might deliver it."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})

    async def gen() -> AsyncIterator[bytes]:
        for a, b in itertools.pairwise(points):
            yield data[a:b]

    return gen


def sentinel_body() -> Body:
    name, data = frame(SENTINEL, eid="evt_sentinel00000000")
    return chunks_of(f"event: {name}\ndata: {data}\n\n".encode(), [])


@dataclass
class Run:
    states: list[StateChange] = field(default_factory=list)
    requests: int = 0


async def _follow(bodies: list[Body], db: Path, until: Callable[[Run], bool], limit: float) -> Run:
    run = Run()

    async def handler(request: httpx.Request) -> httpx.Response:
        body = bodies[min(run.requests, len(bodies) - 1)]
        run.requests += 1
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    writer = await asyncio.to_thread(StoreWriter, db)
    config = EngineConfig(
        base_url="https://tenant.example/api/v2",
        name="fuzz",
        stall_timeout=2.0,
        backoff_base=0.01,
        backoff_cap=0.05,
        batch_max_delay=0.01,
        min_interval=0.05,
    )
    engine = StreamEngine(
        config,
        StaticTokenProvider("t"),
        writer,
        client_factory=lambda: httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    engine.on_state.append(run.states.append)
    task = asyncio.create_task(engine.run())
    deadline = time.monotonic() + limit
    try:
        while not until(run) and not task.done():
            assert time.monotonic() < deadline, (
                f"hung: {[(s.state.value, s.message) for s in run.states][-5:]}"
            )
            await asyncio.sleep(0.01)
    finally:
        engine.stop()
        await asyncio.wait_for(task, 30)  # re-raises anything the engine raised
        await asyncio.to_thread(writer.close)
    assert not any(s.state is StreamState.ERROR for s in run.states), run.states
    return run


def follow(bodies: list[Body], db: Path, limit: float = 20.0) -> tuple[list[str], int]:
    """Serve `bodies` on successive connections (the last one repeats) until the sentinel is stored."""

    def sentinel_stored(run: Run) -> bool:
        if run.requests < len(bodies) or not db.exists():
            return False
        with EventReader(db) as reader:
            return reader.find("evt_sentinel00000000") is not None

    asyncio.run(_follow(bodies, db, sentinel_stored, limit))
    with EventReader(db) as reader:
        ids = [e.event_id for e, _ in reader.export_iter()]
        return ids, reader.rejected_count()


EOL = st.sampled_from(["\n", "\r", "\r\n"])
LINE_TEXT = st.text(
    st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), min_size=1, max_size=200
).filter(lambda t: t.strip() != "")


@st.composite
def stream_body(draw: st.DrawFn) -> tuple[bytes, list[str], int]:
    """A stream of valid events, garbage frames, comments and blank keep-alives with mixed line endings;
    returns (bytes, the valid event ids in order, the number of garbage frames)."""
    out, ids, garbage = [], [], 0
    for i in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["event", "event", "garbage", "bytes", "deep", "comment", "blank"]))
        eol = draw(EOL)
        if kind == "event":
            name, data = frame(i, eid=f"evt_{i:016d}")
            ids.append(f"evt_{i:016d}")
            out.append(f"event: {name}{eol}data: {data}{eol}{eol}".encode())
        elif kind == "garbage":
            garbage += 1
            out.append(f"event: user.created{eol}data: {draw(LINE_TEXT)}{eol}{eol}".encode())
        elif kind == "bytes":  # invalid UTF-8 and control bytes on a data line
            garbage += 1
            raw = draw(st.binary(min_size=1, max_size=120)).replace(b"\r", b"").replace(b"\n", b"")
            out.append(b"event: user.deleted" + eol.encode() + b"data: \xff\xfe" + raw + (eol * 2).encode())
        elif kind == "deep":
            garbage += 1
            depth = draw(st.sampled_from([2000, 100_000]))
            out.append(f"event: user.created{eol}data: {'[' * depth}{']' * depth}{eol}{eol}".encode())
        elif kind == "comment":
            out.append(f": {draw(LINE_TEXT)}{eol}".encode())
        else:  # a keep-alive blank line; after a lone CR it must not be LF (CR LF would be one line end)
            out.append(b"\r" if out and out[-1].endswith(b"\r") else eol.encode())
    body = b"".join(out)
    if out and not body.endswith((b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r", b"\r\n\n", b"\n\r\n")):
        body += b"\n\n"  # the last frame is complete; cut frames are the drop tests' business (tests/stream)
    return body, ids, garbage


@pytest.mark.expect_warning_logs
@FUZZ
@given(stream=stream_body(), cuts=st.lists(st.integers(0, 1 << 20), max_size=30))
def test_every_valid_event_stored_once_every_malformed_frame_rejected(tmp_path_factory, stream, cuts):
    body, ids, garbage = stream
    db = tmp_path_factory.mktemp("fuzz") / "f.sqlite3"
    stored, rejected = follow([chunks_of(body, cuts), sentinel_body()], db)
    assert stored == [*ids, "evt_sentinel00000000"]
    assert rejected == garbage


# random bytes can make a "data:" line that is not JSON: it is rejected, with a warning
@pytest.mark.expect_warning_logs
@FUZZ
@given(
    noise=st.binary(max_size=4096),
    eols=st.lists(st.tuples(st.integers(0, 4096), EOL), max_size=40),
    cuts=st.lists(st.integers(0, 1 << 20), max_size=30),
)
def test_arbitrary_bytes_never_crash_or_hang_and_the_next_connection_works(
    tmp_path_factory, noise, eols, cuts
):
    data = bytearray(noise)
    for at, eol in sorted(eols, reverse=True):
        data[at % (len(data) + 1) : at % (len(data) + 1)] = eol.encode()
    db = tmp_path_factory.mktemp("noise") / "n.sqlite3"
    stored, _ = follow([chunks_of(bytes(data) + b"\n\n", cuts), sentinel_body()], db)
    assert stored[-1] == "evt_sentinel00000000"


def rss_sampler(stop: threading.Event, peak: list[int]) -> None:
    me = psutil.Process()
    while not stop.is_set():
        peak[0] = max(peak[0], me.memory_info().rss)
        time.sleep(0.005)


def huge_line(eol: bytes, size: int = 48 * 1024 * 1024) -> Body:
    piece = b"x" * 65536

    async def gen() -> AsyncIterator[bytes]:
        yield b"event: user.created\ndata: "
        for _ in range(size // len(piece)):
            yield piece
        yield eol + eol

    return gen


EOLS = pytest.mark.parametrize("eol", [b"\n", b"\r\n", b""], ids=["lf", "crlf", "never-ends"])


@pytest.mark.expect_warning_logs
@EOLS
def test_a_huge_line_is_rejected_and_the_stream_goes_on(tmp_path, eol):
    """A 48 MB data line (a broken proxy, an attack) is kept as rejected, not stored, and nothing crashes."""
    stored, rejected = follow([huge_line(eol), sentinel_body()], tmp_path / "h.sqlite3", limit=60)
    assert stored == ["evt_sentinel00000000"]
    assert rejected == (1 if eol else 0)


@pytest.mark.expect_warning_logs
@EOLS
def test_a_huge_line_keeps_memory_bounded(tmp_path, eol):
    """D4 (fixed by stream/sse_decoder.py): the decoder keeps only a prefix of a frame past its size cap."""
    stop, peak = threading.Event(), [0]
    base = psutil.Process().memory_info().rss
    sampler = threading.Thread(target=rss_sampler, args=(stop, peak), daemon=True)
    sampler.start()
    try:
        follow([huge_line(eol), sentinel_body()], tmp_path / "h.sqlite3", limit=60)
    finally:
        stop.set()
        sampler.join()
    growth = (peak[0] - base) / 1e6
    assert growth < 40, f"RSS grew {growth:.0f} MB for a 48 MiB line: the line is buffered whole"


@pytest.mark.expect_warning_logs
@pytest.mark.parametrize(("depth", "kept_as"), [(300, "event"), (5000, "rejected")])
def test_a_deeply_nested_event_is_stored_or_rejected_never_a_crash(tmp_path, depth, kept_as):
    """Nesting inside an otherwise valid event: stored while orjson can parse it, rejected beyond its limit."""
    name, data = frame(1, eid="evt_deep000000000000")
    nested = '{"x":' * depth + "{}" + "}" * depth
    text = data.replace('"identities":[]', f'"identities":[],"deep":{nested}', 1)
    body = f"event: {name}\ndata: {text}\n\n".encode()
    stored, rejected = follow([chunks_of(body, []), sentinel_body()], tmp_path / "d.sqlite3")
    if kept_as == "event":
        assert stored == ["evt_deep000000000000", "evt_sentinel00000000"] and rejected == 0
    else:
        assert stored == ["evt_sentinel00000000"] and rejected == 1
