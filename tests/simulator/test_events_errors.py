"""Every HTTP status and message of the errors table (docs/event-stream.md "Errors"), from the real server over real HTTP."""

from __future__ import annotations

import time

import httpx
import pytest

from helpers.slack import bound
from simulator.sse import read_frames

INVALID_TOKEN = "Invalid token."


def get(sim, token=None, params=None, headers=None, path="/events"):
    hdrs = dict(headers or {})
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    with (
        httpx.Client(timeout=5) as client,
        client.stream("GET", sim.base_url + path, params=params, headers=hdrs) as r,
    ):
        if r.status_code != 200:
            r.read()
        return r


def check(response, status, message=None, startswith=None):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusCode"] == status and body["error"]
    if message is not None:
        assert body["message"] == message
    if startswith is not None:
        assert body["message"].startswith(startswith), body["message"]
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"from": "not a cursor!"}, "Invalid cursor format."),
        ({"from": "AAAAAQAAAAAAAAA"}, "Invalid cursor format."),  # wrong length
        ({"from": "AAAAAQAAAAAAAAB_"}, "Invalid cursor format."),  # beyond the end of the stream
        ({"event_type": "user.exploded"}, "Unsupported event type: 'user.exploded'."),
        ({"event_type": ["user.created", "nope"]}, "Unsupported event type: 'nope'."),
    ],
)
def test_400_cursor_and_event_type(simulator, params, message):
    check(get(simulator, simulator.mint_token(), params), 400, message)


@pytest.mark.parametrize(
    "params",
    [
        {"from": "A" * 1025},
        {"from_timestamp": "2025-01-01T00:00:00.000Z"},  # 24 characters > 20
        {"from_timestamp": "yesterday"},
        {"from_timestamp": "2025-13-01T00:00:00Z"},
        {"surprise": "1"},
        {"from": ["AAAAAQAAAAAAAAAA", "AAAAAQAAAAAAAAAA"]},
        {"from": "AAAAAQAAAAAAAAAA", "from_timestamp": "2025-01-01T00:00:00Z"},
    ],
)
def test_400_invalid_query_string_names_the_problem(simulator, params):
    response = get(simulator, simulator.mint_token(), params)
    check(response, 400, startswith="Invalid request query string.")
    named = next(iter(params))
    assert named in response.json()["message"]


def test_401_missing_malformed_expired_wrong_audience(simulator):
    check(get(simulator), 401, startswith=INVALID_TOKEN)
    check(get(simulator, headers={"Authorization": "Basic abc"}), 401, startswith=INVALID_TOKEN)
    check(get(simulator, "not.a.jwt"), 401, startswith=INVALID_TOKEN)
    check(get(simulator, simulator.mint_token(ttl=-5)), 401, "Invalid token. The access token has expired.")
    check(
        get(simulator, simulator.mint_token(audience="https://other/api/v2/")), 401, startswith=INVALID_TOKEN
    )


def test_401_bad_signature(simulator, make_simulator):
    token = simulator.mint_token()
    head, payload, sig = token.split(".")
    tampered = f"{head}.{payload}.{sig[:-4]}{'AAAA' if sig[-4:] != 'AAAA' else 'BBBB'}"
    check(get(simulator, tampered), 401, "Invalid signature received for JSON Web Token validation.")
    other = make_simulator(seed=2)  # another tenant's key, right audience
    foreign = other.mint_token(audience=simulator.audience)
    check(get(simulator, foreign), 401, "Invalid signature received for JSON Web Token validation.")


def test_401_client_not_global(simulator):
    check(get(simulator, simulator.mint_token(global_client=False)), 401, "Client is not global.")


def test_403_insufficient_scope(simulator):
    msg = "Insufficient scope; expected any of: read:events."
    check(get(simulator, simulator.mint_token(scope="")), 403, msg)
    check(get(simulator, simulator.mint_token(scope="read:users")), 403, msg)


def test_403_too_many_connections_then_ok_after_closing_one(make_simulator):
    sim = make_simulator(max_connections=2)
    token = sim.mint_token()
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(timeout=5) as client:
        streams = [client.stream("GET", sim.events_url, headers=headers) for _ in range(2)]
        opened = [s.__enter__() for s in streams]
        assert [r.status_code for r in opened] == [200, 200]
        check(
            get(sim, token),
            403,
            "Maximum concurrent event stream connections reached. Please close existing connections.",
        )
        streams[0].__exit__(None, None, None)
        deadline = time.monotonic() + bound(5)
        while sim.stats()["connections"] > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        response, _frames = read_frames(client, sim.events_url, token=token, until=lambda fs: True)
        assert response.status_code == 200
        streams[1].__exit__(None, None, None)


def test_404_unknown_paths(simulator):
    check(get(simulator, simulator.mint_token(), path="/nope"), 404)
    check(get(simulator, simulator.mint_token(), path="/events/extra"), 404)


def test_405_wrong_method(simulator):
    r = httpx.post(simulator.events_url, headers={"Authorization": f"Bearer {simulator.mint_token()}"})
    check(r, 405)


def test_410_cursor_beyond_retention(make_simulator):
    sim = make_simulator(backlog=200, retention=50)
    stats = sim.stats()
    assert stats["events"] == 50 and stats["first_seq"] == 151
    token = sim.mint_token()
    # a cursor at position 10 (well before the retained window), built the way the server builds them
    old = _cursor_like(stats["latest_offset"], 10)
    check(get(sim, token, {"from": old}), 410, "Cursor points to data no longer available in the stream.")
    check(get(sim, token, headers={"Last-Event-ID": old}), 410)
    ok = _cursor_like(stats["latest_offset"], 150)  # just before the first retained event
    assert get(sim, token, {"from": ok}).status_code == 200


def test_410_cursor_from_another_log(make_simulator):
    a, b = make_simulator(seed=11, backlog=5), make_simulator(seed=12, backlog=5)
    check(get(b, b.mint_token(), {"from": a.latest_offset()}), 410)


def test_429_rate_limit_headers(make_simulator):
    sim = make_simulator(rate_limit=3, rate_window=60)
    token = sim.mint_token()
    seen = []
    for _ in range(3):
        r = get(sim, token, {"event_type": "nope"})  # fails fast (400) but still counts
        seen.append(int(r.headers["x-ratelimit-remaining"]))
    assert seen == [2, 1, 0]
    r = get(sim, token)
    check(r, 429, startswith="Too many requests.")
    for h in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"):
        assert h.lower() in r.headers
    assert r.headers["x-ratelimit-limit"] == "3" and r.headers["x-ratelimit-remaining"] == "0"
    assert int(r.headers["x-ratelimit-reset"]) > time.time()
    assert 1 <= int(r.headers["retry-after"]) <= 61
    for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert header in r.json()["message"]


def test_429_and_5xx_fault_bursts(simulator):
    token = simulator.mint_token()
    simulator.faults(http_429=2, http_5xx=1)
    codes = [get(simulator, token).status_code for _ in range(4)]
    assert codes == [503, 429, 429, 200]


def _cursor_like(reference: str, seq: int) -> str:
    """A cursor of the same log at position `seq` (the simulator's format: base64url of epoch + seq)."""
    import base64
    import struct

    raw = base64.urlsafe_b64decode(reference + "=" * (-len(reference) % 4))
    epoch = struct.unpack(">IQ", raw)[0]
    return base64.urlsafe_b64encode(struct.pack(">IQ", epoch, seq)).decode().rstrip("=")
