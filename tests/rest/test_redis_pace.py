"""The pace of RedisBucketStore as policy: what it learns, and who it serves, in virtual time.

The scripts run in this module's own redis-server, on the simulation's clock (``pace_sim.py``):
no test sleeps, every run is the same, and a minute of traffic takes about a second.

- The window is learned from what the service says, never from a quiet spell, and a window
  learned too long shrinks at the next probe.
- Waiters on a bucket are served first come, first served across the fleet: the p99 wait stays
  within 2 windows of the fair share; callers that gave up are passed over; a caller that does
  not keep its turn is still served.

One test checks the quiet spell in real time, through a client and the emulator (marked ``slow``
too). Marked ``redis``: ``python -m pytest -m redis`` runs them.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.redis  # left out of the default run: python -m pytest -m redis

pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")

from service_client import RedisBucketStore  # noqa: E402
from service_client.rest import PaceWait  # noqa: E402

from .pace_sim import FixedWindow, Simulation  # noqa: E402


def _learned(raw: Any, store: RedisBucketStore, field: str) -> int | None:
    value = raw.hget(f"{store.key_prefix}{{s/GET:x}}:pace", field)
    return None if value is None else int(value)


def _p99(waits: list[float]) -> float:
    return waits[math.ceil(0.99 * len(waits)) - 1]


# ============================================================================ the window


@pytest.mark.parametrize("burst", [8, 12, 15, 20, 30])
def test_a_quiet_spell_between_two_bursts_is_never_learned_as_a_window(
    burst: int, make_store: Callable[..., RedisBucketStore], raw: Any,
) -> None:
    store = make_store(timeout=1.0)
    sim = Simulation(store, FixedWindow(10, 1.0))  # 10 per second, Retry-After in whole seconds
    sim.start_callers(burst, until=0.0, loop=False)  # a burst with its 429s
    sim.run_out()
    sim.now += 3.0  # nothing to send for 3 s
    sim.start_callers(burst, until=0.0, loop=False)  # a second burst
    sim.run_out()
    start = sim.now
    sim.start_callers(8, until=start + 20.0)  # then 8 callers for 20 s
    sim.run_out()
    window = _learned(raw, store, "W")
    assert window is not None and window <= 1100, f"learned a window of {window} ms for a 1 s window"
    assert sim.rate(start, start + 20.0) >= 0.9 * 10, f"{sim.rate(start, start + 20.0):.2f} calls/s"


def test_a_window_learned_too_long_shrinks_at_the_next_probe(
    make_store: Callable[..., RedisBucketStore], raw: Any,
) -> None:
    store = make_store(timeout=1.0)
    service = FixedWindow(10, 4.0)
    sim = Simulation(store, service)
    sim.start_callers(8, until=30.0)
    sim.run_out()
    assert 4000 <= (_learned(raw, store, "W") or 0) <= 4100
    service.window = 1.0  # the service's window is now a quarter as long
    start = sim.now
    sim.start_callers(8, until=start + 40.0)
    shrunk_at = None
    while shrunk_at is None and sim.now < start + 40.0:
        sim.run_until(sim.now + 0.25)
        if (_learned(raw, store, "W") or 0) <= 1100:
            shrunk_at = sim.now - start
    sim.run_out()
    # A probe comes at least every 12 s of clean windows: within 4 windows of the old length.
    assert shrunk_at is not None and shrunk_at <= 4 * 4.0, f"still {_learned(raw, store, 'W')} ms after 40 s"
    assert sim.rate(start + 15.0, start + 40.0) >= 0.9 * 10


# ============================================================================ the line


def test_waiters_are_served_first_come_first_served(make_store: Callable[..., RedisBucketStore]) -> None:
    # 4 processes of 10 callers each, every caller calling in a loop: each call's fair share of a
    # 10-per-second bucket is 4 s of waiting.
    stores = [make_store(timeout=1.0) for _ in range(4)]
    service = FixedWindow(10, 1.0)
    sim = Simulation(stores[0], service, jitter=0.02)
    for store in stores[1:]:  # the other processes share the simulation's clock and service
        sim.add_process(store)
    sim.start_callers(40, until=60.0)
    sim.run_out()
    calls = sorted((started, started + took) for caller in sim.callers for started, took in caller.waits
                   if started >= 5.0)  # the first windows teach the limit
    waits = sorted(end - started for started, end in calls)
    assert len(waits) >= 450
    assert _p99(waits) <= 4.0 + 2 * 1.0, f"p99 wait {_p99(waits):.2f} s, fair share 4 s"
    # First come, first served: no call ends much after one that came more than a window later
    # (a request refused by a probe's 429 pays its Retry-After: a window).
    overtaken = max((end_a - end_b for n, (start_a, end_a) in enumerate(calls) for start_b, end_b in calls[n + 1:]
                     if start_b - start_a > 1.5), default=0.0)
    assert overtaken <= 1.5, f"a call ended {overtaken:.2f} s after one that came over a window later"


def test_callers_that_gave_up_are_passed_over(make_store: Callable[..., RedisBucketStore]) -> None:
    store = make_store(timeout=1.0)
    sim = Simulation(store, FixedWindow(10, 1.0))
    sim.start_callers(20, until=40.0)
    sim.run_until(10.5)
    ghosts = [store.acquire("GET:x", scope="s") for _ in range(100)]  # 100 callers wait, then give up
    assert all(isinstance(wait, PaceWait) and wait.turn for wait in ghosts)
    sim.run_out()
    waits = sim.waits(since=10.5)
    assert _p99(waits) <= 2.0 + 2 * 1.0, f"p99 wait {_p99(waits):.2f} s behind 100 callers that gave up"


def test_a_caller_that_does_not_keep_its_turn_is_still_served(make_store: Callable[..., RedisBucketStore]) -> None:
    store = make_store(timeout=1.0)
    sim = Simulation(store, FixedWindow(10, 1.0), keep_turns=False)  # a wrapper that drops the turn
    sim.start_callers(20, until=20.0)
    sim.run_out(within=60.0)  # every call ends
    assert sim.rate(3.0, 20.0) >= 0.6 * 10


# ============================================================================ in real time, through a client


@pytest.mark.slow
def test_a_client_keeps_to_the_limit_after_a_quiet_spell(
    emulator: Any, world: Any, make_client: Callable[..., Any], make_store: Callable[..., RedisBucketStore],
) -> None:
    emulator.set_rate_limit(4, 0.4, retry_after_fraction=True)  # 10 calls per second
    bot = make_client(bucket_store=make_store())
    bot.login(world.bot_token, timeout=15)

    def call() -> None:
        bot.api_call("/auth/me", max_retries=50, timeout_ms=60_000)

    with concurrent.futures.ThreadPoolExecutor(8, thread_name_prefix="test-call") as pool:
        for future in [pool.submit(call) for _ in range(6)]:  # a burst with its 429s
            future.result(timeout=30)
        threading.Event().wait(1.2)  # a quiet spell: nothing to send
        for future in [pool.submit(call) for _ in range(6)]:  # a second burst
            future.result(timeout=30)
        started = time.time() * 1000.0
        stop = time.monotonic() + 3.0

        def caller() -> None:
            while time.monotonic() < stop:
                call()

        for future in [pool.submit(caller) for _ in range(8)]:  # then 8 callers for 3 s
            future.result(timeout=60)
    emulator.set_rate_limit(None)
    accepted = [e for e in emulator.requests() if e["path"] == "/auth/me" and e["status"] == 200
                and started <= e["startedAt"] <= started + 3000.0]
    assert len(accepted) / 3.0 >= 0.8 * 10, f"{len(accepted) / 3.0:.1f} calls/s against a limit of 10"


@pytest.mark.slow
def test_a_client_serves_the_waiters_of_a_paced_bucket_in_turn(
    emulator: Any, world: Any, make_client: Callable[..., Any], make_store: Callable[..., RedisBucketStore],
) -> None:
    emulator.set_rate_limit(4, 0.4, retry_after_fraction=True)  # 10 calls per second
    bot = make_client(bucket_store=make_store())
    bot.login(world.bot_token, timeout=15)
    waits: list[float] = []
    begin = time.monotonic()
    stop, counted = begin + 8.0, begin + 2.0  # the first windows teach the limit

    def caller() -> None:
        while (started := time.monotonic()) < stop:
            bot.api_call("/auth/me", max_retries=50, timeout_ms=60_000)
            if started >= counted:
                waits.append(time.monotonic() - started)

    with concurrent.futures.ThreadPoolExecutor(20, thread_name_prefix="test-call") as pool:
        for future in [pool.submit(caller) for _ in range(20)]:  # 20 callers: a fair share of 2 s each
            future.result(timeout=90)
    emulator.set_rate_limit(None)
    assert len(waits) >= 40
    # In turn: no caller waits much longer than its fair share, 20 callers' turns at the rate the
    # service let through (10 calls/s, so 2 s; less when a loaded machine slows the service down).
    rate = min(10.0, len(waits) / (stop - counted))
    fair = 20 / rate
    # A caller the loaded machine did not run at its turn is served after the others that were
    # there (one turn more): one call in 50 may pay that, none more than once.
    late = [w for w in waits if w > fair + 3 * 0.4]
    assert len(late) <= len(waits) // 50 and max(waits) <= 2 * fair + 3 * 0.4, (
        f"{len(late)} of {len(waits)} calls waited past the fair share of {fair:.2f} s: {sorted(waits)[-5:]}")
