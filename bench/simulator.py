"""Backlog replay rate of the tenant simulator (target: ≥ 100k events/s served; never the bottleneck).

Starts `tenant-events simulator --ephemeral --backlog N` as a subprocess (so the consumer does not share its
GIL), then replays the whole backlog (`from_timestamp` far in the past) to:
  raw      a minimal consumer: one socket, recv() into a buffer, count event frames (upper bound of serving)
  httpx    httpx streaming, counting frames in the raw bytes (an HTTP client, no SSE parsing)
  sse      httpx + httpx-sse, parsing every frame (the stack the app uses; a peer, not the simulator)
Prints medians over --runs and the raw/peer ratios; all measured in the same run.

    .venv/bin/python bench/simulator.py --events 1000000 --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
import httpx_sse

import sim_process

MARKER = b'","event":{'  # only event frames contain it (heartbeats are {"offset":"..."})
PARAMS = "from_timestamp=2000-01-01T00:00:00Z"


def raw_consumer(auth_url: str, tok: str, n: int) -> int:
    parts = urlsplit(auth_url)
    sock = socket.create_connection((parts.hostname, parts.port))
    request = (
        f"GET /api/v2/events?{PARAMS} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {tok}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    )
    sock.sendall(request.encode())
    count, tail = 0, b""
    while count < n:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        data = tail + chunk
        count += data.count(MARKER)
        tail = data[-(len(MARKER) - 1) :]
    sock.close()
    return count


def httpx_consumer(auth_url: str, tok: str, n: int) -> int:
    count, tail = 0, b""
    with (
        httpx.Client(timeout=60) as client,
        client.stream(
            "GET", f"{auth_url}/api/v2/events?{PARAMS}", headers={"Authorization": f"Bearer {tok}"}
        ) as response,
    ):
        for chunk in response.iter_raw():  # no size: it would wait to fill one
            data = tail + chunk
            count += data.count(MARKER)
            tail = data[-(len(MARKER) - 1) :]
            if count >= n:
                break
    return count


def sse_consumer(auth_url: str, tok: str, n: int) -> int:
    count = 0
    with (
        httpx.Client(timeout=60) as client,
        httpx_sse.connect_sse(
            client, "GET", f"{auth_url}/api/v2/events?{PARAMS}", headers={"Authorization": f"Bearer {tok}"}
        ) as source,
    ):
        for sse in source.iter_sse():
            if sse.event not in ("offset-only", "error", ""):
                count += 1
                if count >= n:
                    break
    return count


def measure(fn: Callable[[str, str, int], int], auth_url: str, tok: str, n: int) -> float:
    started = time.perf_counter()
    got = fn(auth_url, tok, n)
    elapsed = time.perf_counter() - started
    if got < n:
        raise SystemExit(f"{fn.__name__}: only {got} of {n} events arrived")
    return n / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sse-events", type=int, default=200_000, help="events per httpx-sse run (it is slower)"
    )
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    proc, auth_url = sim_process.start_simulator(args.events)
    try:
        tok = sim_process.admin_token(auth_url)
        consumers = [
            ("raw", raw_consumer, args.events),
            ("httpx", httpx_consumer, args.events),
            ("sse", sse_consumer, min(args.sse_events, args.events)),
        ]
        rates: dict[str, list[float]] = {name: [] for name, _f, _n in consumers}
        for run in range(args.runs):
            for name, fn, n in consumers:  # interleaved, so machine load hits all alike
                rates[name].append(measure(fn, auth_url, tok, n))
            print(f"run {run + 1}/{args.runs}: " + "  ".join(f"{k}={v[-1]:,.0f}/s" for k, v in rates.items()))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(f"\nBacklog replay, {args.events:,} events, median of {args.runs} runs ({os.cpu_count()} CPUs)")
    print(f"{'consumer':<10}{'events/s':>14}{'min':>14}{'max':>14}{'vs raw':>9}")
    for name, values in rates.items():
        print(
            f"{name:<10}{medians[name]:>14,.0f}{min(values):>14,.0f}{max(values):>14,.0f}"
            f"{medians[name] / medians['raw']:>9.2f}"
        )
    target = 100_000
    print(f"\ntarget ≥ {target:,}/s served: {'met' if medians['raw'] >= target else 'NOT met'}")
    if args.json:
        print(json.dumps({"events": args.events, "runs": args.runs, "median": medians, "all": rates}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
