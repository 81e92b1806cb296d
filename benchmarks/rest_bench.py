"""REST session benchmark against the in-process emulator: throughput, rate limits, head-of-line blocking.

Run: ``python benchmarks/rest_bench.py`` (needs the ``emulator`` extra). Prints
one ``name: value`` line per figure:

- ``rest_rps`` / ``bare_rps`` / ``throughput_ratio``: 2,000 ``GET /auth/me``
  through :class:`RestSession` from 16 threads, against the same requests with
  a bare ``requests.Session`` and 5 threads (goal: ratio >= 0.9). Each side
  runs twice, alternating; the best run of each counts.
- ``ratelimit_time_ratio`` / ``ratelimit_429s``: the emulator allows 5
  requests per second per bucket; 100 calls spread over 4 buckets. Ideal time:
  the last window the limit allows (25 calls per bucket at 5 per 1 s window:
  the 25th may start 4 s after the first) plus the time the same 100 calls
  take with the limiter off. Goal: ratio <= 1.15.
- ``head_of_line_ms``: one call to an unblocked bucket while 20 calls wait on
  a blocked one (median of 5; goal < 50).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import itertools
import math
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import requests
import requests.adapters

from service_client.emulator import Emulator
from service_client.rest import RestSession, Route

USER_AGENT = "service_client/bench"


def _session(emu: Emulator, token: str) -> RestSession:
    rest = RestSession(emu.base_url, user_agent=USER_AGENT)
    rest.token = token
    return rest


def _run_threads(threads: int, total: int, one_call: Any) -> float:
    """Make ``total`` calls from ``threads`` threads; return calls per second."""
    counter = itertools.count()
    errors: list[BaseException] = []

    def loop() -> None:
        while next(counter) < total:
            try:
                one_call()
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
                return

    workers = [threading.Thread(target=loop, name=f"bench-{n}") for n in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise RuntimeError(f"{len(errors)} calls failed, first: {errors[0]!r}")
    return total / elapsed


def bench_throughput(emu: Emulator, token: str, total: int) -> dict[str, float]:
    rest = _session(emu, token)
    me = Route("GET", "/auth/me")
    bare = requests.Session()
    bare.mount("http://", requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=5))
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "X-Service-SDK": "true",
        "User-Agent": USER_AGENT,
    }
    url = emu.base_url + "/auth/me"

    def bare_call() -> None:
        response = bare.get(url, headers=headers, timeout=15)
        response.raise_for_status()
        response.json()

    try:
        _run_threads(16, 200, lambda: rest.request(me))  # warm-up: connections, caches
        _run_threads(5, 200, bare_call)
        rest_runs, bare_runs = [], []
        for _ in range(2):
            bare_runs.append(_run_threads(5, total, bare_call))
            rest_runs.append(_run_threads(16, total, lambda: rest.request(me)))
    finally:
        rest.close()
        bare.close()
    rest_rps, bare_rps = max(rest_runs), max(bare_runs)
    return {"rest_rps": rest_rps, "bare_rps": bare_rps, "throughput_ratio": rest_rps / bare_rps}


def _four_buckets(emu: Emulator, token: str, bot_id: str) -> list[Route]:
    owner = emu.create_user("bench-owner")
    routes = [Route("GET", "/auth/me"), Route("GET", "/servers")]
    for n in range(2):
        server = emu.create_server(f"bench {n}", owner["user"]["publicId"])["server"]
        emu.add_member(server["publicId"], bot_id)
        routes.append(Route("GET", "/servers/{s}", s=server["publicId"]))
    assert len({r.bucket for r in routes}) == 4
    return routes


def _run_calls(rest: RestSession, routes: list[Route], calls: int) -> float:
    started = time.perf_counter()
    futures = [rest.submit(routes[n % len(routes)], retry=20) for n in range(calls)]
    for future in futures:
        future.result(timeout=120)
    return time.perf_counter() - started


def bench_ratelimit(emu: Emulator, token: str, bot_id: str, calls: int = 100, limit: int = 5) -> dict[str, float]:
    routes = _four_buckets(emu, token, bot_id)
    rest = _session(emu, token)
    try:
        _run_calls(rest, routes, 8)  # warm-up, limiter off
        unthrottled = _run_calls(rest, routes, calls)
        emu.set_rate_limit(limit, window_s=1.0)
        emu.clear_requests()
        elapsed = _run_calls(rest, routes, calls)
        refused = sum(1 for entry in emu.requests() if entry["status"] == 429)
    finally:
        emu.set_rate_limit(None)
        rest.close()
    per_bucket = math.ceil(calls / len(routes))
    ideal = (math.ceil(per_bucket / limit) - 1) * 1.0 + unthrottled
    return {
        "ratelimit_total_s": elapsed,
        "ratelimit_ideal_s": ideal,
        "ratelimit_time_ratio": elapsed / ideal,
        "ratelimit_429s": refused,
    }


def bench_head_of_line(emu: Emulator, token: str, rounds: int = 5) -> dict[str, float]:
    rest = _session(emu, token)
    me = Route("GET", "/auth/me")
    blocked = Route("GET", "/servers")
    samples = []
    try:
        rest.request(me)  # warm-up
        for _ in range(rounds):
            emu.clear_faults()
            emu.clear_requests()
            emu.add_fault("GET", "/servers", status=429, retry_after="5")
            first = rest.submit(blocked)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not any(
                e["status"] == 429 and e["endedAt"] is not None for e in emu.requests()
            ):
                time.sleep(0.005)  # the benchmark polls the journal; the library never polls
            time.sleep(0.02)  # the client has read the 429 and blocked the bucket
            waiting = [first, *(rest.submit(blocked) for _ in range(20))]
            time.sleep(0.05)
            assert not any(f.done() for f in waiting), "the bucket should be blocked"
            started = time.perf_counter()
            rest.request(me)
            samples.append((time.perf_counter() - started) * 1000.0)
            emu.clear_requests()
            # Drop the waiting calls before the next round (close() ends them); a new session follows.
            rest.close()
            concurrent.futures.wait(waiting, timeout=2)
            rest = _session(emu, token)
            rest.request(me)
    finally:
        rest.close()
        emu.clear_faults()
    return {"head_of_line_ms": statistics.median(samples)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per throughput run (default 2000)")
    args = parser.parse_args(argv)
    with Emulator() as emu:
        created = emu.create_user("benchbot", bot=True)
        token, bot_id = created["token"], created["user"]["publicId"]
        figures: dict[str, float] = {}
        figures.update(bench_throughput(emu, token, args.calls))
        figures.update(bench_ratelimit(emu, token, bot_id))
        figures.update(bench_head_of_line(emu, token))
    for name, value in figures.items():
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{name}: {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
