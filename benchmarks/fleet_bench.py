"""Fleet benchmark: several processes of one bot on one rate-limited bucket.

Run: ``python benchmarks/fleet_bench.py`` (needs the ``emulator`` and
``redis`` extras and a Redis server, by default on 127.0.0.1:6379). The
emulator runs in its own process (``python -m service_client emulator``) and
limits every bucket to ``--limit`` requests per ``--window`` seconds (5 per
1 s by default; 429 with an integer ``Retry-After``, as the service sends).
``--processes`` bot processes (8) log in with the same token, then each makes
``--calls`` calls (60) at once on one bucket (``GET /auth/me``), retrying
429s until every call succeeds. Once with each process on its own in-memory
table, once with every process on one :class:`RedisBucketStore`. Prints one
``name: value`` line per figure:

- ``fleet_429s_memory`` / ``fleet_429s_redis``: 429s the emulator answered to
  the fleet (from its request journal), each store.
- ``fleet_429s_ratio``: Redis over memory (goal <= 0.25).
- ``fleet_throughput_ratio``: with the Redis store, accepted calls per second
  over the limit (goal >= 0.9). The rate is ``(accepted - limit) / (last
  accepted - first accepted)``: a fleet at the limit sends ``limit`` calls at
  the start of each window, so the first window's calls take no time.
- ``fleet_throughput_ratio_memory``: the same for the in-memory tables.
- ``fleet_seconds_memory`` / ``fleet_seconds_redis``: wall time of each run.
- ``redis_overhead_us``: the median extra time per request that the store
  adds: 1,000 sequential calls with the limiter off, timing every call the
  session makes to its store; median of the Redis store's time per request
  minus the in-memory store's.
- ``request_p50_us_memory`` / ``request_p50_us_redis``: median whole call,
  for scale.
- ``bursts_second_throughput_ratio``: burst, quiet, burst. The Redis fleet
  makes ``--burst-calls`` calls per process (15), stays quiet for
  ``--quiet`` seconds (3), then makes as many again; the second burst's
  accepted calls per second over the limit, as above (goal >= 0.9: what was
  learned in the first burst must not slow the second).
  ``bursts_first_throughput_ratio`` is the first burst's, for scale.
- ``redis_partly_slow_throughput_ratio``: limiter off, one process, 5
  callers for ``--slow-seconds`` (3 s) each run: calls per second with the
  store's Redis behind a proxy that holds 10% of the replies 0.2 s (past the
  store's 50 ms bound), over calls per second with Redis dead (the proxy
  resets every connection); two runs of each, alternating (goal >= 0.9).
  ``redis_partly_slow_calls_per_s`` / ``redis_dead_calls_per_s`` are the
  rates.

- ``quiet_spell_throughput_ratio``: one process on one
  :class:`RedisBucketStore`, the service limiting the bucket to
  ``--quiet-limit`` requests per ``--quiet-window`` seconds (10 per 1 s): a
  burst of ``--burst-calls`` calls (15) with its 429s, ``--quiet`` seconds (3)
  with nothing to send, a second burst, then ``--quiet-threads`` threads (8)
  call in a loop for ``--quiet-seconds`` (20); the accepted calls per second
  of those 20 s over the limit (goal >= 0.9: the window is learned from what
  the service says, never from the quiet spell). ``quiet_spell_429s`` counts
  the 429s of the 20 s.
- ``pace_wait_p99_s``: ``--fair-processes`` processes (4) with
  ``--fair-callers`` threads each (10) call in a loop on one bucket for
  ``--fair-seconds`` (30) at ``--quiet-limit`` per ``--quiet-window``; the
  99th percentile of a call's wait (its whole duration), the calls that
  started in the first ``--fair-warmup`` seconds (5) left out.
  ``pace_fair_share_s`` is the wait of every call when the fleet's waiters
  are served first come, first served (callers over the rate), and
  ``pace_wait_p99_over_fair_windows`` the p99's excess over it in windows
  (goal <= 2: nobody starves while others go through);
  ``pace_wait_p50_s`` and ``pace_wait_max_s`` for scale.

``--phases`` picks the phases to run (default: all of them): ``overhead``,
``slow``, ``fleet``, ``bursts``, ``quiet``, ``fair``.

Every fleet call is made with ``timeout_ms=900000``: a call waits for a pace
slot only within its own timeout, and these callers accept to wait for their
turn behind the whole fleet.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import logging
import math
import multiprocessing
import multiprocessing.synchronize
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _emulator_process import EmulatorProcess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "rest"))
from redis_proxy import RedisProxy  # the slow-Redis proxy of the tests

from service_client import Client, MemoryBucketStore, RedisBucketStore
from service_client.rest import BucketStore

PATH = "/auth/me"
#: Retries per call: enough that every call succeeds, whatever the store.
MAX_RETRIES = 200
#: The phases, in the order they run.
PHASES = ("overhead", "slow", "fleet", "bursts", "quiet", "fair")
#: Each fleet call's timeout, ms: long enough to wait for its pace slot behind the whole fleet.
FLEET_TIMEOUT_MS = 900_000


class _FallbackCounter(logging.Handler):
    """Counts the store's "Redis failed" warnings in a bot process."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "Redis bucket store" in record.getMessage():
            self.count += 1


def _bot_process(
    mode: str,
    urls: tuple[str, str],
    token_queue: Any,
    redis_url: str,
    namespace: str,
    calls: int,
    ready: multiprocessing.synchronize.Barrier,
    go: list[multiprocessing.synchronize.Event],
    results: Any,
) -> None:
    """One bot process: log in, then for each burst wait for its start, make ``calls`` calls at once, report."""
    token = token_queue.get(timeout=60)
    fallbacks = _FallbackCounter()
    logging.getLogger("service_client.rest").addHandler(fallbacks)
    store = RedisBucketStore(redis_url, namespace=namespace) if mode == "redis" else None
    client = Client(base_url=urls[0], socket_url=urls[1], bucket_store=store)
    try:
        client.login(token, timeout=60)
        ready.wait(120)
        with concurrent.futures.ThreadPoolExecutor(calls, thread_name_prefix="fleet-call") as pool:
            for start in go:
                start.wait(900)
                ok = failed = 0
                futures = [pool.submit(client.api_call, PATH, max_retries=MAX_RETRIES, timeout_ms=FLEET_TIMEOUT_MS)
                           for _ in range(calls)]
                for future in futures:
                    try:
                        future.result(timeout=900)
                        ok += 1
                    except Exception:  # noqa: BLE001 - counted and reported
                        failed += 1
                results.put((ok, failed, fallbacks.count))
    finally:
        client.destroy()
        if store is not None:
            store.close()


def fleet_run(
    emu: EmulatorProcess, token: str, mode: str, args: argparse.Namespace, *, calls: int | None = None,
    bursts: int = 1, quiet: float = 0.0,
) -> list[dict[str, float]]:
    """Fleet runs with ``mode`` ("memory" or "redis"): ``bursts`` bursts ``quiet`` seconds apart.

    Returns:
        The figures of each burst, from the emulator's journal.
    """
    calls = args.calls if calls is None else calls
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Barrier(args.processes + 1)
    go = [ctx.Event() for _ in range(bursts)]
    results = ctx.Queue()
    tokens = ctx.Queue()
    namespace = f"fleet-bench-{uuid.uuid4().hex}"
    emu.call("POST", "/ratelimit", {"limit": None})
    procs = [
        ctx.Process(
            target=_bot_process,
            args=(mode, (emu.base_url, emu.socket_url), tokens, args.redis_url, namespace, calls,
                  ready, go, results),
            name=f"fleet-bot-{n}",
        )
        for n in range(args.processes)
    ]
    for proc in procs:
        proc.start()
        tokens.put(token)  # through a queue, never on a command line
    ready.wait(180)
    emu.call("POST", "/ratelimit", {"limit": args.limit, "windowMs": args.window * 1000})
    figures = []
    for n, start in enumerate(go):
        if n:
            time.sleep(quiet)  # the quiet spell between two bursts
        emu.call("DELETE", "/requests")
        started = time.perf_counter()
        start.set()
        outcomes = [results.get(timeout=900) for _ in procs]
        seconds = time.perf_counter() - started
        journal = [e for e in emu.call("GET", "/requests")["requests"] if e["path"] == PATH]
        accepted = sorted(e["startedAt"] for e in journal if e["status"] == 200)
        limited = sum(1 for e in journal if e["status"] == 429)
        failed = sum(outcome[1] for outcome in outcomes)
        fallbacks = sum(outcome[2] for outcome in outcomes)
        if failed or len(accepted) != args.processes * calls:
            raise RuntimeError(f"{mode}: {failed} calls failed, {len(accepted)} accepted")
        span_s = (accepted[-1] - accepted[0]) / 1000.0
        rate = (len(accepted) - args.limit) / span_s
        figures.append({
            "429s": limited,
            "throughput_ratio": rate / (args.limit / args.window),
            "seconds": seconds,
            "fallbacks": fallbacks,
        })
    for proc in procs:
        proc.join(30)
    emu.call("POST", "/ratelimit", {"limit": None})
    if mode == "redis":
        _delete_keys(args.redis_url, namespace)
    return figures


def quiet_spell(emu: EmulatorProcess, token: str, args: argparse.Namespace) -> dict[str, float]:
    """One process: a burst, a quiet spell, a burst, then callers in a loop; their rate over the limit."""
    namespace = f"fleet-bench-{uuid.uuid4().hex}"
    store = RedisBucketStore(args.redis_url, namespace=namespace)
    client = Client(base_url=emu.base_url, socket_url=emu.socket_url, bucket_store=store)
    limit, window = args.quiet_limit, args.quiet_window

    def call() -> None:
        client.api_call(PATH, max_retries=MAX_RETRIES, timeout_ms=FLEET_TIMEOUT_MS)

    try:
        client.login(token, timeout=60)
        emu.call("POST", "/ratelimit", {"limit": limit, "windowMs": window * 1000})
        with concurrent.futures.ThreadPoolExecutor(args.burst_calls, thread_name_prefix="quiet-burst") as pool:
            for future in [pool.submit(call) for _ in range(args.burst_calls)]:
                future.result(timeout=900)
            time.sleep(args.quiet)  # nothing to send
            for future in [pool.submit(call) for _ in range(args.burst_calls)]:
                future.result(timeout=900)
        emu.call("DELETE", "/requests")
        stop = time.monotonic() + args.quiet_seconds

        def caller() -> None:
            while time.monotonic() < stop:
                call()

        started = time.time() * 1000.0
        with concurrent.futures.ThreadPoolExecutor(args.quiet_threads, thread_name_prefix="quiet-call") as pool:
            for future in [pool.submit(caller) for _ in range(args.quiet_threads)]:
                future.result(timeout=args.quiet_seconds + 900)
        journal = [e for e in emu.call("GET", "/requests")["requests"] if e["path"] == PATH]
    finally:
        client.destroy()
        store.close()
        emu.call("POST", "/ratelimit", {"limit": None})
        _delete_keys(args.redis_url, namespace)
    end = started + args.quiet_seconds * 1000.0
    accepted = sum(1 for e in journal if e["status"] == 200 and e["startedAt"] <= end)
    return {
        "throughput_ratio": accepted / args.quiet_seconds / (limit / window),
        "429s": sum(1 for e in journal if e["status"] == 429),
    }


def _fair_process(
    urls: tuple[str, str], token_queue: Any, redis_url: str, namespace: str, callers: int, seconds: float,
    warmup: float, ready: multiprocessing.synchronize.Barrier, go: multiprocessing.synchronize.Event, results: Any,
) -> None:
    """One process of the fairness phase: ``callers`` threads call in a loop; reports each call's wait."""
    token = token_queue.get(timeout=60)
    store = RedisBucketStore(redis_url, namespace=namespace)
    client = Client(base_url=urls[0], socket_url=urls[1], bucket_store=store)
    waits: list[float] = []
    try:
        client.login(token, timeout=60)
        ready.wait(120)
        go.wait(900)
        begin = time.monotonic()
        stop, counted = begin + seconds, begin + warmup

        def caller() -> list[float]:
            mine = []
            while (started := time.monotonic()) < stop:
                client.api_call(PATH, max_retries=MAX_RETRIES, timeout_ms=FLEET_TIMEOUT_MS)
                if started >= counted:
                    mine.append(time.monotonic() - started)
            return mine

        with concurrent.futures.ThreadPoolExecutor(callers, thread_name_prefix="fair-call") as pool:
            for future in [pool.submit(caller) for _ in range(callers)]:
                waits.extend(future.result(timeout=seconds + 900))
    finally:
        results.put(waits)
        client.destroy()
        store.close()


def pace_fairness(emu: EmulatorProcess, token: str, args: argparse.Namespace) -> dict[str, float]:
    """Callers of several processes on one paced bucket: the waits of their calls against the fair share."""
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Barrier(args.fair_processes + 1)
    go = ctx.Event()
    results = ctx.Queue()
    tokens = ctx.Queue()
    namespace = f"fleet-bench-{uuid.uuid4().hex}"
    limit, window = args.quiet_limit, args.quiet_window
    procs = [
        ctx.Process(
            target=_fair_process,
            args=((emu.base_url, emu.socket_url), tokens, args.redis_url, namespace, args.fair_callers,
                  args.fair_seconds, args.fair_warmup, ready, go, results),
            name=f"fair-bot-{n}",
        )
        for n in range(args.fair_processes)
    ]
    for proc in procs:
        proc.start()
        tokens.put(token)
    try:
        ready.wait(180)
        emu.call("POST", "/ratelimit", {"limit": limit, "windowMs": window * 1000})
        go.set()
        waits = sorted(w for _ in procs for w in results.get(timeout=args.fair_seconds + 900))
    finally:
        for proc in procs:
            proc.join(60)
        emu.call("POST", "/ratelimit", {"limit": None})
        _delete_keys(args.redis_url, namespace)
    fair = args.fair_processes * args.fair_callers / (limit / window)
    p99 = waits[min(len(waits) - 1, math.ceil(0.99 * len(waits)) - 1)]
    return {
        "p50": statistics.median(waits),
        "p99": p99,
        "max": waits[-1],
        "fair": fair,
        "over": (p99 - fair) / window,
        "calls": len(waits),
    }


def partly_slow(emu: EmulatorProcess, token: str, args: argparse.Namespace) -> dict[str, float]:
    """Calls per second with a partly slow Redis and with a dead one (limiter off, one process)."""
    emu.call("POST", "/ratelimit", {"limit": None})
    port = int(args.redis_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    slow, dead = RedisProxy(port), RedisProxy(port)
    slow.set_slow(0.1, 0.2)
    dead.set_mode("reset")
    namespace = f"fleet-bench-{uuid.uuid4().hex}"
    rates: dict[str, list[float]] = {"slow": [], "dead": []}
    try:
        for name, proxy in (("dead", dead), ("slow", slow), ("dead", dead), ("slow", slow)):
            store = RedisBucketStore(proxy.url, namespace=namespace)
            client = Client(base_url=emu.base_url, socket_url=emu.socket_url, bucket_store=store)
            try:
                client.login(token, timeout=60)
                stop = time.monotonic() + args.slow_seconds
                count = [0]

                def caller(client: Client = client, stop: float = stop, count: list[int] = count) -> None:
                    while time.monotonic() < stop:
                        client.api_call(PATH)
                        count[0] += 1

                with concurrent.futures.ThreadPoolExecutor(5, thread_name_prefix="slow-call") as pool:
                    for future in [pool.submit(caller) for _ in range(5)]:
                        future.result(timeout=args.slow_seconds + 60)
                rates[name].append(count[0] / args.slow_seconds)
            finally:
                client.destroy()
                store.close()
    finally:
        slow.close()
        dead.close()
    _delete_keys(args.redis_url, namespace)
    return {"slow": statistics.fmean(rates["slow"]), "dead": statistics.fmean(rates["dead"])}


def _delete_keys(redis_url: str, namespace: str) -> None:
    """Delete the keys a run wrote (its own namespace only)."""
    import redis

    conn = redis.Redis.from_url(redis_url)
    try:
        for key in conn.scan_iter(f"service_client:{namespace}:*"):
            conn.delete(key)
    finally:
        conn.close()


class _TimedStore:
    """A BucketStore that adds up the time spent in the store it wraps."""

    def __init__(self, inner: BucketStore) -> None:
        self.inner = inner
        self.spent = 0.0

    def wait_time(self, key: str, *, scope: str = "") -> float:
        started = time.perf_counter()
        try:
            return self.inner.wait_time(key, scope=scope)
        finally:
            self.spent += time.perf_counter() - started

    def acquire(self, key: str, *, scope: str = "", turn: int | None = None) -> float:
        started = time.perf_counter()
        try:
            return self.inner.acquire(key, scope=scope, turn=turn)  # a wrapper passes the turn on
        finally:
            self.spent += time.perf_counter() - started

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        started = time.perf_counter()
        try:
            self.inner.block(key, delay, scope=scope)
        finally:
            self.spent += time.perf_counter() - started


def overhead(emu: EmulatorProcess, token: str, args: argparse.Namespace) -> dict[str, float]:
    """Median store time and median whole call per request, each store (limiter off)."""
    emu.call("POST", "/ratelimit", {"limit": None})
    namespace = f"fleet-bench-{uuid.uuid4().hex}"
    figures: dict[str, float] = {}
    for mode in ("memory", "redis", "memory", "redis"):
        inner: BucketStore = (
            RedisBucketStore(args.redis_url, namespace=namespace) if mode == "redis" else MemoryBucketStore()
        )
        store = _TimedStore(inner)
        client = Client(base_url=emu.base_url, socket_url=emu.socket_url, bucket_store=store)
        try:
            client.login(token, timeout=60)
            for _ in range(50):  # warm up connections and the scripts
                client.api_call(PATH)
            store_us: list[float] = []
            call_us: list[float] = []
            for _ in range(args.overhead_calls):
                store.spent = 0.0
                started = time.perf_counter()
                client.api_call(PATH)
                call_us.append((time.perf_counter() - started) * 1e6)
                store_us.append(store.spent * 1e6)
        finally:
            client.destroy()
            if isinstance(inner, RedisBucketStore):
                inner.close()
        # The better of two runs of each store: the machine is shared.
        if mode == "redis":
            _delete_keys(args.redis_url, namespace)
        for name, value in ((f"store_us_{mode}", statistics.median(store_us)),
                            (f"request_p50_us_{mode}", statistics.median(call_us))):
            figures[name] = min(figures.get(name, value), value)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--calls", type=int, default=60, help="calls per process")
    parser.add_argument("--limit", type=int, default=5, help="requests per window per bucket")
    parser.add_argument("--window", type=float, default=1.0, help="window, seconds")
    parser.add_argument("--overhead-calls", type=int, default=1000)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--burst-calls", type=int, default=15, help="calls per process per burst")
    parser.add_argument("--quiet", type=float, default=3.0, help="quiet spell between the bursts, seconds")
    parser.add_argument("--slow-seconds", type=float, default=3.0, help="length of each partly-slow run, seconds")
    parser.add_argument("--quiet-limit", type=int, default=10, help="quiet-spell and fairness phases: limit")
    parser.add_argument("--quiet-window", type=float, default=1.0, help="quiet-spell and fairness phases: window, s")
    parser.add_argument("--quiet-threads", type=int, default=8, help="callers after the quiet spell")
    parser.add_argument("--quiet-seconds", type=float, default=20.0, help="how long they call, seconds")
    parser.add_argument("--fair-processes", type=int, default=4)
    parser.add_argument("--fair-callers", type=int, default=10, help="callers per process")
    parser.add_argument("--fair-seconds", type=float, default=30.0, help="how long they call, seconds")
    parser.add_argument("--fair-warmup", type=float, default=5.0, help="calls started before are not counted, s")
    parser.add_argument("--phases", default=",".join(PHASES), help="comma-separated, among " + ", ".join(PHASES))
    args = parser.parse_args(argv)
    phases = set(args.phases.split(","))
    if not phases <= set(PHASES):
        parser.error(f"unknown phases: {', '.join(sorted(phases - set(PHASES)))}")

    lines: dict[str, float] = {}
    emu = EmulatorProcess()
    try:
        token = emu.call("POST", "/users", {"name": "fleet-bot", "bot": True})["token"]
        if "overhead" in phases:
            over = overhead(emu, token, args)
            lines.update({
                "redis_overhead_us": over["store_us_redis"] - over["store_us_memory"],
                "request_p50_us_memory": over["request_p50_us_memory"],
                "request_p50_us_redis": over["request_p50_us_redis"],
            })
        if "slow" in phases:
            slow = partly_slow(emu, token, args)
            lines.update({
                "redis_partly_slow_calls_per_s": slow["slow"],
                "redis_dead_calls_per_s": slow["dead"],
                "redis_partly_slow_throughput_ratio": slow["slow"] / slow["dead"],
            })
        if "fleet" in phases:
            (memory,) = fleet_run(emu, token, "memory", args)
            (shared,) = fleet_run(emu, token, "redis", args)
            lines.update({
                "fleet_429s_memory": memory["429s"],
                "fleet_429s_redis": shared["429s"],
                "fleet_429s_ratio": shared["429s"] / max(1, memory["429s"]),
                "fleet_throughput_ratio": shared["throughput_ratio"],
                "fleet_throughput_ratio_memory": memory["throughput_ratio"],
                "fleet_seconds_memory": memory["seconds"],
                "fleet_seconds_redis": shared["seconds"],
                "fleet_redis_fallbacks": shared["fallbacks"],
            })
        if "bursts" in phases:
            first, second = fleet_run(emu, token, "redis", args, calls=args.burst_calls, bursts=2, quiet=args.quiet)
            lines.update({
                "bursts_first_throughput_ratio": first["throughput_ratio"],
                "bursts_second_throughput_ratio": second["throughput_ratio"],
                "bursts_429s": first["429s"] + second["429s"],
            })
        if "quiet" in phases:
            quiet = quiet_spell(emu, token, args)
            lines.update({
                "quiet_spell_throughput_ratio": quiet["throughput_ratio"],
                "quiet_spell_429s": quiet["429s"],
            })
        if "fair" in phases:
            fair = pace_fairness(emu, token, args)
            lines.update({
                "pace_wait_p50_s": fair["p50"],
                "pace_wait_p99_s": fair["p99"],
                "pace_wait_max_s": fair["max"],
                "pace_fair_share_s": fair["fair"],
                "pace_wait_p99_over_fair_windows": fair["over"],
                "pace_calls": fair["calls"],
            })
    finally:
        emu.stop()
    for name, value in lines.items():
        print(f"{name}: {value:.0f}" if isinstance(value, int) else f"{name}: {value:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
