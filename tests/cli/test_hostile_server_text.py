"""Server text reaches the terminal, the log and the window escaped and cut, never raw (server_text.py).

A hostile tenant on 127.0.0.1 answers the real CLI with escape sequences that clear the screen and recolour
text, a CR that would overwrite the state line, newlines that would split it, a bidi override, NUL, DEL and a C1
CSI, and text thousands of characters long: in a 403 body's message and in an in-stream error's `code` and
`message`. What the CLI prints and logs holds no raw control character, and no line is a page long.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from helpers.events_factory import frame
from helpers.fixtures_engine import cli
from helpers.fixtures_proving import http_response, raw_server
from helpers.slack import bound
from tenant_events.store import EventReader
from tenant_events.store.records import summary_of

HOSTILE = "\x1b[2J\x1b[31mPWNED\x1b[0m\rOVERWRITTEN\nsecond line\u202eevil\x00\x7f\x9b\x1b]0;title\x07"
LONG = HOSTILE + "A" * 3000
RAW = frozenset("\x1b\r\x00\x7f\x9b\x07\u202e")


def assert_no_raw_control(text: str, where: str) -> None:
    """Every line printable (\\n only ends lines), none longer than a sane one."""
    for line in text.split("\n"):
        bad = sorted({f"U+{ord(c):04X}" for c in line if not c.isprintable()})
        assert not bad, f"{where}: raw control characters {bad} in {line[:200]!r}"
        assert len(line) <= 1200, f"{where}: a {len(line)}-character line"
    assert not RAW & set(text)


def run_stream(url: str, data: Path, until) -> tuple[int, str]:
    proc = cli(
        "stream",
        "--base-url",
        url,
        "--name",
        "hostile",
        "--data-dir",
        str(data),
        env={"TENANT_EVENTS_ACCESS_TOKEN": "hostile-token"},
    )
    deadline = time.monotonic() + bound(60)
    while proc.poll() is None and not until() and time.monotonic() < deadline:
        time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err


def log_text(data: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in (data / "logs").glob("*.log*"))


def test_a_403_body_full_of_escape_sequences_is_shown_escaped_and_cut(tmp_path):
    body = json.dumps({"message": LONG}).encode()
    refusal = http_response("403 Forbidden", {"Content-Type": "application/json"}, body)
    with raw_server("127.0.0.1", refusal) as server:
        code, err = run_stream(server.url + "/api/v2", tmp_path, until=lambda: False)
    assert code != 0 and server.requests, err
    assert "read:events" in err and "\\x1b[2J" in err and "\\r" in err  # said, visibly
    assert "A" * 400 not in err  # cut
    assert_no_raw_control(err, "stderr")
    assert_no_raw_control(log_text(tmp_path), "log file")


@pytest.mark.parametrize("field", ["code", "message"])
def test_an_in_stream_error_full_of_escape_sequences_is_shown_escaped(tmp_path, field):
    error = {"code": "processing_error", "message": "the server failed"}
    error[field] = HOSTILE if field == "code" else LONG
    frame = "event: error\ndata: " + json.dumps({"type": "error", "error": error}) + "\n\n"
    stream = http_response("200 OK", {"Content-Type": "text/event-stream"}, frame.encode())
    with raw_server("127.0.0.1", stream) as server:
        _, err = run_stream(server.url + "/api/v2", tmp_path, until=lambda: len(server.requests) >= 2)
    assert len(server.requests) >= 2, err
    assert "the server ended the stream" in err and "\\x1b[2J" in err, err
    assert_no_raw_control(err, "stderr")
    assert_no_raw_control(log_text(tmp_path), "log file")


def test_an_event_whose_fields_hold_escape_sequences_is_printed_escaped_by_timeline(tmp_path):
    """Event fields are the tenant's words too: the table's summary and the `timeline` lines quote them."""
    name, data = frame(1, type_="organization.created")
    message = json.loads(data)
    message["event"]["data"]["object"]["name"] = HOSTILE
    body = f"event: {name}\ndata: {json.dumps(message)}\n\n".encode()
    stream = http_response("200 OK", {"Content-Type": "text/event-stream"}, body)
    db = tmp_path / "tenants" / "hostile.sqlite3"
    with raw_server("127.0.0.1", stream) as server:
        _, err = run_stream(server.url + "/api/v2", tmp_path, until=lambda: len(server.requests) >= 2)
    assert_no_raw_control(err, "stream stderr")
    with EventReader(db) as reader:
        [(event, raw)] = list(reader.export_iter())
    for summary in (event.summary, summary_of(event.type, raw)):  # as stored, as the table makes it again
        assert summary.isprintable() and "\\x1b[2J" in summary, summary
    shown = cli("timeline", f"org:{message['event']['data']['object']['id']}", "--data-dir", str(tmp_path))
    out, err = shown.communicate(timeout=60)
    assert shown.returncode == 0, err
    assert "\\x1b[2J" in out, out
    assert_no_raw_control(out, "timeline stdout")
    assert_no_raw_control(err, "timeline stderr")
