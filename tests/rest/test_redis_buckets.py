"""RedisBucketStore against a real redis-server of its own on a free port (conftest.py).

Shared blocks between stores, threads and processes (two Clients in two processes), blocks that
only move later under concurrent writers, expiry, namespaces and token scopes, the learned pace,
and fail-over through a TCP proxy the test controls (Redis stops answering, refuses, comes back).

Each test writes under its own namespace (``service_client:test-<uuid>:``) and deletes those keys
afterwards. Marked ``redis``: the default run leaves them out, ``python -m pytest -m redis`` runs
them. Without the ``redis-server`` binary the tests skip with the reason, except under CI
(``CI`` set), where they must run and fail instead.
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import queue
import random
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.redis  # left out of the default run: python -m pytest -m redis

redis = pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")

from service_client import Client, RateLimitError, RedisBucketStore, ServiceError, ServiceTimeoutError  # noqa: E402
from service_client.emulator import Emulator  # noqa: E402
from service_client.rest import bucket_scope  # noqa: E402

from .redis_proxy import RedisProxy, RedisServer, free_port  # noqa: E402

CHILD = Path(__file__).with_name("redis_fleet_child.py")
ROOT = Path(__file__).resolve().parent.parent.parent


def _keys(raw: Any, prefix: str) -> list[str]:
    return sorted(key.decode() for key in raw.scan_iter(match=prefix + "*", count=500))


def _block_key(store: RedisBucketStore, scope: str, bucket: str) -> str:
    """The documented key layout: ``<prefix>{<scope>/<bucket>}:block``."""
    return f"{store.key_prefix}{{{scope}/{bucket}}}:block"


# ============================================================================ shared blocks


def test_a_block_reaches_a_store_that_never_saw_it(make_store: Callable[..., RedisBucketStore]) -> None:
    first, second = make_store(), make_store()
    first.block("GET:servers/S1", 30.0, scope="bot-a")
    assert first.wait_time("GET:servers/S1", scope="bot-a") > 25  # its own copy, no round trip
    assert second.wait_time("GET:servers/S1", scope="bot-a") == 0.0  # nothing local yet
    wait = second.acquire("GET:servers/S1", scope="bot-a")  # Redis has it
    assert 25 < wait <= 30
    assert second.wait_time("GET:servers/S1", scope="bot-a") > 25  # now copied locally
    assert second.acquire("GET:servers/S1", scope="bot-b") == 0.0  # another bot
    assert second.acquire("POST:servers/S1", scope="bot-a") == 0.0  # another bucket


def test_a_redis_client_is_accepted_and_left_untouched(
    make_store: Callable[..., RedisBucketStore], namespace: str, redis_server: RedisServer
) -> None:
    client = redis.Redis(host="127.0.0.1", port=redis_server.port, socket_timeout=7)
    store = RedisBucketStore(client, namespace=namespace)
    try:
        store.block("GET:x", 30.0, scope="s")
        assert 25 < make_store().acquire("GET:x", scope="s") <= 30
        assert client.connection_pool.connection_kwargs["socket_timeout"] == 7  # the store has its own pool
        assert client.ping()
    finally:
        store.close()
        client.close()


def test_blocked_until_only_moves_later_under_concurrent_writers(
    make_store: Callable[..., RedisBucketStore], raw: Any
) -> None:
    writers, rounds = 6, 25
    stores = [make_store() for _ in range(writers)]
    key = _block_key(stores[0], "s", "GET:x")
    delays = [[random.uniform(5.0, 60.0) for _ in range(rounds)] for _ in range(writers)]
    start = threading.Barrier(writers + 1)
    done = threading.Event()
    seen: list[int] = []

    def write(n: int) -> None:
        start.wait(10)
        for delay in delays[n]:
            stores[n].block("GET:x", delay, scope="s")

    def read() -> None:
        start.wait(10)
        while not done.is_set():
            value = raw.get(key)
            if value is not None:
                seen.append(int(value))

    threads = [threading.Thread(target=write, args=(n,), name=f"test-writer-{n}") for n in range(writers)]
    reader = threading.Thread(target=read, name="test-reader")
    for thread in [*threads, reader]:
        thread.start()
    began = time.monotonic()
    for thread in threads:
        thread.join(30)
    elapsed = time.monotonic() - began
    done.set()
    reader.join(10)
    assert seen, "the reader saw the key"
    assert all(a <= b for a, b in zip(seen, seen[1:], strict=False)), "the blocked-until instant moved earlier"
    longest = max(max(row) for row in delays)
    wait = make_store().acquire("GET:x", scope="s")  # a fresh store reads Redis
    assert longest - elapsed - 1.0 <= wait <= longest + 0.01
    # One writer alone: a shorter block after a longer one changes nothing.
    stores[0].block("GET:y", 20.0, scope="s")
    stores[1].block("GET:y", 1.0, scope="s")
    assert make_store().acquire("GET:y", scope="s") > 15


def test_every_key_expires_and_the_block_key_with_the_block(
    make_store: Callable[..., RedisBucketStore], raw: Any
) -> None:
    store = make_store()
    store.block("GET:a", 0.4, scope="s")
    assert store.acquire("GET:b", scope="s") == 0.0  # opens a pace window for another bucket
    block_key = _block_key(store, "s", "GET:a")
    assert 0 < raw.pttl(block_key) <= 400
    keys = _keys(raw, store.key_prefix)
    assert block_key in keys and len(keys) == 3  # a's block and pace, b's pace
    for key in keys:
        assert 0 < raw.pttl(key) <= 600_000, f"{key} never expires"
    deadline = time.monotonic() + 10
    while raw.exists(block_key):  # Redis expires it on its own clock
        assert time.monotonic() < deadline, "the block key outlived its block"
        time.sleep(0.02)
    assert make_store().acquire("GET:a", scope="s") == 0.0


def test_namespaces_and_bots_never_share_and_the_token_never_reaches_redis(
    make_store: Callable[..., RedisBucketStore], raw: Any, namespace: str
) -> None:
    here, other_deployment = make_store(), make_store(namespace=f"{namespace}:other")
    assert here.key_prefix == f"service_client:{namespace}:"
    here.block("GET:x", 30.0, scope="bot-a")
    assert other_deployment.acquire("GET:x", scope="bot-a") == 0.0
    assert make_store().acquire("GET:x", scope="bot-b") == 0.0
    assert make_store().acquire("GET:x", scope="bot-a") > 25
    assert _block_key(here, "bot-a", "GET:x") in _keys(raw, here.key_prefix)
    assert not [key for key in _keys(raw, other_deployment.key_prefix) if key.endswith(":block")]


def test_a_client_writes_its_token_hash_never_its_token(
    emulator: Emulator, world: Any, make_client: Callable[..., Client],
    make_store: Callable[..., RedisBucketStore], raw: Any,
) -> None:
    store = make_store()
    bot = make_client(bucket_store=store)
    bot.login(world.bot_token, timeout=15)
    server = world.server["publicId"]
    emulator.add_fault("GET", f"/servers/{server}", status=429, retry_after="30", count=1)
    with pytest.raises(RateLimitError):
        bot.api_call(f"/servers/{server}", max_retries=0)
    scope = bucket_scope(world.bot_token)
    keys = _keys(raw, store.key_prefix)
    assert f"{store.key_prefix}{{{scope}/GET:servers/{server}}}:block" in keys
    token = world.bot_token.encode()
    for key in keys:
        assert token not in key.encode() and token not in (raw.dump(key) or b"")


# ============================================================================ two processes


class _Child:
    """The second bot process (``redis_fleet_child.py``), spoken to in JSON lines."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, name="test-child-stdout", daemon=True).start()
        self.send(config)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the child process said nothing in {timeout} s") from None
        if line is None:
            assert self.proc.stderr is not None
            raise AssertionError(f"the child process ended: {self.proc.stderr.read()[-2000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def test_a_429_in_one_process_blocks_a_client_in_another_that_never_sent(
    emulator: Emulator, world: Any, make_client: Callable[..., Client],
    make_store: Callable[..., RedisBucketStore], redis_url: str, namespace: str,
) -> None:
    server = world.server["publicId"]
    child = _Child({"base_url": emulator.base_url, "socket_url": emulator.socket_url,
                    "token": world.bot_token, "redis_url": redis_url, "namespace": namespace})
    try:
        assert child.receive(60) == {"ready": True}
        bot = make_client(bucket_store=make_store())
        bot.login(world.bot_token, timeout=15)
        emulator.add_fault("GET", f"/servers/{server}", status=429, retry_after="3", count=1)
        with pytest.raises(RateLimitError):
            bot.api_call(f"/servers/{server}", max_retries=0)
        blocked_at = time.time()
        # The child has never called this route; it shares the bucket GET:servers/<id>.
        child.send({"path": f"/servers/{server}/categories"})
        reply = child.receive(30)
    finally:
        child.close()
    assert reply["error"] is None
    assert reply["sent_at"] < blocked_at + 2.0, "the child asked while the bucket was still blocked"
    journal = emulator.requests()
    refused = next(e for e in journal if e["path"] == f"/servers/{server}" and e["status"] == 429)
    sent = [e for e in journal if e["path"] == f"/servers/{server}/categories"]
    assert len(sent) == 1 and sent[0]["status"] == 200
    # Sent once the 3 s block (counted from the 429, on Redis's clock) had passed.
    assert sent[0]["startedAt"] >= refused["endedAt"] + 3000 - 20
    assert reply["done_at"] - reply["sent_at"] >= 3.0 - (reply["sent_at"] - blocked_at) - 0.1


# ============================================================================ the pace


class _FixedWindow:
    """A limiter like the service's: ``limit`` per window, the window opening at the first request."""

    def __init__(self, limit: int, window: float) -> None:
        self.limit, self.window = limit, window
        self._lock = threading.Lock()
        self._start = -1e9
        self._count = 0

    def hit(self) -> float | None:
        """None when accepted, else the seconds left in the window (the Retry-After)."""
        with self._lock:
            now = time.monotonic()
            if now - self._start >= self.window:
                self._start, self._count = now, 0
            if self._count < self.limit:
                self._count += 1
                return None
            return self._start + self.window - now


def _run_fleet(
    stores: list[RedisBucketStore], limiter: _FixedWindow, accepted_goal: int, accepted_at: list[float] | None = None
) -> list[float]:
    """Each store is one worker sending as fast as its store lets it; returns the times of the 429s.

    ``accepted_at``, when given, gets the time of each accepted request.
    """
    accepted = [0]
    refusals: list[float] = []
    lock = threading.Lock()
    finished = threading.Event()

    def work(store: RedisBucketStore) -> None:
        turn = None
        while not finished.is_set():
            wait = store.acquire("GET:x", scope="s") if turn is None else store.acquire("GET:x", scope="s", turn=turn)
            if wait > 0:
                turn = getattr(wait, "turn", turn)  # back with its turn, as the REST session does
                finished.wait(wait)
                continue
            turn = None
            retry_after = limiter.hit()
            with lock:
                if retry_after is None:
                    accepted[0] += 1
                    if accepted_at is not None:
                        accepted_at.append(time.monotonic())
                    if accepted[0] >= accepted_goal:
                        finished.set()
                else:
                    refusals.append(time.monotonic())
            if retry_after is not None:
                store.block("GET:x", retry_after, scope="s")

    threads = [threading.Thread(target=work, args=(store,), name=f"test-fleet-{n}") for n, store in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert finished.is_set(), "the fleet did not get its calls through"
    return refusals


def test_the_pace_spares_the_429s_that_sharing_blocks_alone_earns(
    make_store: Callable[..., RedisBucketStore], namespace: str
) -> None:
    limit, window, workers, goal = 4, 0.4, 10, 36  # 9 windows
    blocks_only = _run_fleet([make_store(namespace=f"{namespace}:blocks", pace=False) for _ in range(workers)],
                             _FixedWindow(limit, window), goal)
    paced = _run_fleet([make_store(namespace=f"{namespace}:paced") for _ in range(workers)],
                       _FixedWindow(limit, window), goal)
    # With blocks alone every worker sends when a block lifts: about workers - limit 429s a window.
    assert len(blocks_only) >= 20
    # With the pace, 429s teach the limit in the first windows, then only the odd probe is refused.
    assert len(paced) * 2 <= len(blocks_only), (len(paced), len(blocks_only))


def test_the_learned_window_follows_the_service_when_it_shrinks_to_less_than_half(
    make_store: Callable[..., RedisBucketStore], raw: Any,
) -> None:
    limit = 4
    limiter = _FixedWindow(limit, 0.8)
    stores = [make_store() for _ in range(10)]
    _run_fleet(stores, limiter, limit * 4)  # a burst: the store learns a 0.8 s window
    pace = f"{stores[0].key_prefix}{{s/GET:x}}:pace"
    learned = int(raw.hget(pace, "W") or 0)
    assert 700 <= learned <= 1100, f"learned {learned} ms for a 0.8 s window"
    limiter.window = 0.3  # during the quiet spell the service's window becomes 0.3 s
    _run_fleet(stores, limiter, limit * 8)  # a second burst: the next probe shows the new window
    learned = int(raw.hget(pace, "W") or 0)
    # What every process of the fleet now paces by (the rate it reaches at that window depends on
    # the machine's load; the virtual-time tests of test_redis_pace.py measure the rate itself).
    assert 0 < learned <= 450, f"still paced by a {learned} ms window after the service's became 0.3 s"
    accepted: list[float] = []
    _run_fleet(stores, limiter, limit * 6, accepted)  # and the fleet goes on at the new window
    assert len(accepted) >= limit * 6  # (workers that were sending as the goal was reached add theirs)
    assert int(raw.hget(pace, "W") or 0) <= 450, "the window grew back without the service's changing"


# ============================================================================ Redis failing


def _redis_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "Redis" in r.getMessage()]


def _until(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    """Poll ``condition`` (something only a later call can show) until true, within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_fail_over_when_redis_stops_answering_then_comes_back(
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="service_client.rest.redis")
    store = make_store(proxy.url, retry_interval=0.2)
    direct = make_store()
    store.block("GET:a", 30.0, scope="s")  # forwarding: shared
    assert direct.acquire("GET:a", scope="s") > 25 and store.available

    proxy.set_mode("stall")  # Redis stops answering
    started = time.monotonic()
    assert store.acquire("GET:b", scope="s") == 0.0  # the call fails: this process's table answers
    assert time.monotonic() - started < 1.0, "a Redis call outlived its timeout"
    assert not store.available
    # The cool-down ends, one call probes and fails: now it is an outage, said once.
    _until(lambda: store.acquire("GET:b", scope="s") == 0.0 and bool(_redis_warnings(caplog)), "no warning")
    started = time.monotonic()
    for _ in range(200):
        assert store.acquire("GET:b", scope="s") == 0.0
    assert time.monotonic() - started < 2.0  # no request waits on Redis, but the odd probe
    store.block("GET:c", 30.0, scope="s")  # recorded while Redis is away ...
    assert store.acquire("GET:c", scope="s") > 25  # ... and honoured in this process
    assert direct.acquire("GET:c", scope="s") == 0.0  # (other processes could not learn it)

    proxy.set_mode("reset")  # connections refused and reset: still the same outage
    for _ in range(20):
        assert store.acquire("GET:b", scope="s") == 0.0
    assert len(_redis_warnings(caplog)) == 1

    proxy.set_mode("forward")  # Redis answers again
    direct.block("GET:d", 30.0, scope="s")
    _until(lambda: store.acquire("GET:d", scope="s") > 0.0, "the store never went back to Redis")
    assert store.available
    assert any("answers again" in r.getMessage() for r in caplog.records)
    assert len(_redis_warnings(caplog)) == 1  # one warning for the whole outage
    assert store.acquire("GET:c", scope="s") > 20  # the block of the outage still holds here


def test_a_short_stall_costs_a_cool_down_not_a_warning(
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="service_client.rest.redis")
    store = make_store(proxy.url)
    assert store.acquire("GET:a", scope="s") == 0.0
    proxy.set_mode("stall")
    assert store.acquire("GET:a", scope="s") == 0.0 and not store.available  # local, no wait
    proxy.set_mode("forward")
    _until(lambda: store.acquire("GET:a", scope="s") >= 0.0 and store.available, "Redis never used again")
    assert _redis_warnings(caplog) == []


def test_the_bot_keeps_serving_while_redis_stalls(
    emulator: Emulator, world: Any, make_client: Callable[..., Client],
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy,
) -> None:
    proxy.set_mode("stall")
    store = make_store(proxy.url)
    bot = make_client(bucket_store=store)
    bot.login(world.bot_token, timeout=15)
    for _ in range(20):
        assert bot.api_call("/auth/me")["user"]["publicId"] == world.bot["publicId"]
    assert not store.available
    # A 429 still blocks the bucket in this process: the retry waits out the Retry-After.
    server = world.server["publicId"]
    emulator.add_fault("GET", f"/servers/{server}", status=429, retry_after="1", count=1)
    bot.api_call(f"/servers/{server}")
    tries = [e for e in emulator.requests() if e["path"] == f"/servers/{server}"]
    assert [e["status"] for e in tries] == [429, 200]
    assert tries[1]["startedAt"] >= tries[0]["endedAt"] + 1000 - 20


# ============================================================================ configuration


def test_a_timeout_in_the_url_can_lower_the_bound_but_never_raise_it(
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy
) -> None:
    store = make_store(proxy.url + "?socket_timeout=5&socket_connect_timeout=5")
    assert store.acquire("GET:a", scope="s") == 0.0 and store.available  # connected through the proxy
    proxy.set_mode("stall")
    for candidate in (store, make_store(proxy.url + "?socket_timeout=5")):  # a live connection, a new one
        started = time.monotonic()
        candidate.acquire("GET:b", scope="s")
        assert time.monotonic() - started < 1.0, "the URL's 5 s timeout overrode the store's bound"
        assert not candidate.available
    assert store.timeout == pytest.approx(0.05)
    lower = make_store(proxy.url + "?socket_timeout=0.02&socket_connect_timeout=0.02")
    assert lower.timeout == pytest.approx(0.02)


def _errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_wrong_password_is_one_clear_error_naming_the_url_without_the_password(
    make_store: Callable[..., RedisBucketStore], guarded_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest.redis")
    url = f"redis://:wrong-staple-9@127.0.0.1:{guarded_redis.port}/0"
    store = make_store(url, retry_interval=0.05)
    store.block("GET:a", 30.0, scope="s")
    assert store.acquire("GET:a", scope="s") > 25  # runs on its own table
    _until(lambda: store.acquire("GET:b", scope="s") >= 0.0 and len(caplog.records) >= 3, "no probe")
    errors = _errors_logged(caplog)
    assert len(errors) == 1, errors
    assert f"redis://:***@127.0.0.1:{guarded_redis.port}/0" in errors[0]
    assert "Authentication" in errors[0] or "password" in errors[0].lower()
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]  # the error says it all
    assert all("wrong-staple-9" not in r.getMessage() for r in caplog.records)
    assert store.url == f"redis://:***@127.0.0.1:{guarded_redis.port}/0"
    assert "wrong-staple-9" not in repr(store) and "***" in repr(store)
    right = make_store(guarded_redis.url)  # the right password works
    right.block("GET:a", 30.0, scope="s")
    assert make_store(guarded_redis.url).acquire("GET:a", scope="s") > 25


def test_an_unreachable_url_is_one_clear_error(
    make_store: Callable[..., RedisBucketStore], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest.redis")
    url = f"redis://carol:pass-word-x@127.0.0.1:{free_port()}/3"  # nothing listens there
    store = make_store(url, retry_interval=0.05)
    for _ in range(3):
        store.acquire("GET:a", scope="s")
    errors = _errors_logged(caplog)
    assert len(errors) == 1 and "redis://carol:***@127.0.0.1:" in errors[0] and "/3" in errors[0], errors
    assert all("pass-word-x" not in r.getMessage() for r in caplog.records)


def test_strict_raises_at_construction_instead_of_running_locally(
    guarded_redis: RedisServer, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    bad = f"redis://:wrong-staple-9@127.0.0.1:{guarded_redis.port}/0"
    with pytest.raises(ServiceError) as info:
        RedisBucketStore(bad, namespace=namespace, strict=True)
    text = str(info.value)
    assert f"redis://:***@127.0.0.1:{guarded_redis.port}/0" in text and "wrong-staple-9" not in text
    assert info.value.__cause__ is None and info.value.__context__ is None and "strict" in text
    assert "wrong-staple-9" not in _library_locals(info.value)
    with pytest.raises(ServiceError, match="cannot use redis://127.0.0.1:"):
        RedisBucketStore(f"redis://127.0.0.1:{free_port()}/0", namespace=namespace, strict=True)
    store = RedisBucketStore(guarded_redis.url, namespace=namespace, strict=True)  # reachable: fine
    try:
        assert store.available and store.acquire("GET:a", scope="s") == 0.0
    finally:
        store.close()
    assert "wrong-staple-9" not in caplog.text


def _calls_per_second(client: Client, seconds: float, threads: int = 4) -> float:
    """Calls a client completes per second, ``threads`` callers for ``seconds``."""
    done = [0] * threads
    stop = threading.Event()

    def call(n: int) -> None:
        while not stop.is_set():
            client.api_call("/auth/me")
            done[n] += 1

    workers = [threading.Thread(target=call, args=(n,), name=f"test-caller-{n}", daemon=True) for n in range(threads)]
    for worker in workers:
        worker.start()
    stop.wait(seconds)
    stop.set()
    for worker in workers:
        worker.join(10)
    return sum(done) / seconds


def test_a_partly_slow_redis_costs_no_more_than_a_dead_one(
    world: Any, make_client: Callable[..., Client], make_store: Callable[..., RedisBucketStore],
    proxy: RedisProxy, redis_server: RedisServer, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest.redis")
    dead = RedisProxy(redis_server.port)
    dead.set_mode("reset")
    proxy.set_slow(0.1, 0.3)  # one reply in ten comes 0.3 s late: past the 50 ms bound
    try:
        rates: dict[str, list[float]] = {"dead": [], "slow": []}
        for name, url in (("dead", dead.url), ("slow", proxy.url), ("dead", dead.url), ("slow", proxy.url)):
            store = make_store(url)
            bot = make_client(bucket_store=store)
            bot.login(world.bot_token, timeout=15)
            rates[name].append(_calls_per_second(bot, 1.0))
            bot.destroy()
    finally:
        dead.close()
    assert proxy.delayed >= 1, "the proxy delayed nothing"
    # The circuit breaker keeps the store local for growing cool-downs: about as fast as with
    # no Redis (the benchmark measures 0.9 or more; the margin here is for a busy machine).
    assert max(rates["slow"]) >= 0.6 * min(rates["dead"]), rates
    closes = sum(1 for r in caplog.records if "local for" in r.getMessage())
    assert closes <= 16, f"the store went local {closes} times in 2 s"


# ============================================================================ pace waits


def test_a_call_waits_for_a_pace_slot_only_within_its_own_timeout(
    emulator: Emulator, world: Any, make_client: Callable[..., Client], make_store: Callable[..., RedisBucketStore],
) -> None:
    emulator.set_rate_limit(2, 0.6, retry_after_fraction=True)
    bot = make_client(bucket_store=make_store())
    bot.login(world.bot_token, timeout=15)
    with concurrent.futures.ThreadPoolExecutor(6, thread_name_prefix="test-call") as pool:
        # The store learns the bucket: 2 calls per 0.6 s window.
        for future in [pool.submit(bot.api_call, "/auth/me", max_retries=50) for _ in range(12)]:
            future.result(timeout=30)

        def timed_call() -> tuple[float, BaseException | None]:
            started = time.monotonic()
            try:
                bot.api_call("/auth/me", timeout_ms=200, max_retries=50)
            except ServiceTimeoutError as exc:
                return time.monotonic() - started, exc
            return time.monotonic() - started, None

        outcomes = [f.result(timeout=30) for f in [pool.submit(timed_call) for _ in range(12)]]
    emulator.set_rate_limit(None)
    timed_out = [(took, exc) for took, exc in outcomes if exc is not None]
    assert timed_out, "12 calls at once with a 200 ms timeout all got a slot of a 2-per-0.6 s bucket"
    assert all("rate-limit slot" in str(exc) for _, exc in timed_out)
    # No call waited (much) past its own timeout for a slot: the pace wait is bounded.
    assert max(took for took, _ in outcomes) < 1.5, outcomes


# ============================================================================ stale writes and key hygiene


def test_a_block_written_late_ends_when_the_service_said_not_later(
    make_store: Callable[..., RedisBucketStore], raw: Any
) -> None:
    store = make_store(timeout=3.0)  # a bound long enough that the stalled write still lands
    assert store.acquire("GET:x", scope="s") == 0.0
    raw.client_pause(400, all=False)  # Redis holds every write for 0.4 s: a stall
    seen = time.monotonic()
    store.block("GET:x", 1.0, scope="s")  # the 429 said 1 s; the write lands 0.4 s later
    landed = time.monotonic() - seen
    assert landed >= 0.3, f"the pause did not hold the write ({landed:.3f} s)"
    wait = make_store().acquire("GET:x", scope="s")
    elapsed = time.monotonic() - seen
    assert wait <= 1.0 - elapsed + 0.05, f"a phantom block: {wait:.3f} s left {elapsed:.3f} s after a 1 s 429"
    assert wait > 0.2


def test_pace_keys_live_a_few_windows_not_ten_minutes(
    make_store: Callable[..., RedisBucketStore], raw: Any
) -> None:
    stores = [make_store() for _ in range(6)]
    _run_fleet(stores, _FixedWindow(3, 0.3), 24)  # learns a 0.3 s window
    pace_key = _block_key(stores[0], "s", "GET:x").replace(":block", ":pace")
    assert raw.hget(pace_key, "W") is not None, "the window was not learned"
    assert 0 < raw.pttl(pace_key) <= 8 * 600, raw.pttl(pace_key)  # a few windows of 0.3 s (and margin)
    once = make_store()
    for n in range(20):  # buckets used once: forgotten within seconds
        once.acquire(f"GET:servers/{n}", scope="s")
    ttls = [raw.pttl(_block_key(once, "s", f"GET:servers/{n}").replace(":block", ":pace")) for n in range(20)]
    assert all(0 < ttl <= 10_000 for ttl in ttls), ttls


# ============================================================================ review findings


def test_a_long_outage_ends_when_redis_answers_again(
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy
) -> None:
    now = [1000.0]
    store = make_store(proxy.url, retry_interval=0.2, clock=lambda: now[0])
    proxy.set_mode("reset")
    for _ in range(1100):  # more failed probes in a row than 2 ** n stays a float for
        now[0] += 1.0  # past each cool-down: every call probes, and fails
        assert store.acquire("GET:a", scope="s") == 0.0
    assert not store.available
    proxy.set_mode("forward")
    now[0] += 1.0
    assert store.acquire("GET:a", scope="s") == 0.0
    assert store.available, "the store never went back to Redis after a long outage"


def test_a_probe_that_fails_in_another_way_does_not_keep_the_circuit_open(
    make_store: Callable[..., RedisBucketStore], proxy: RedisProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    store = make_store(proxy.url, retry_interval=0.2, clock=lambda: now[0])
    proxy.set_mode("reset")
    assert store.acquire("GET:a", scope="s") == 0.0 and not store.available
    proxy.set_mode("forward")
    real = redis.Redis.evalsha

    def broken(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug below the store")

    monkeypatch.setattr(redis.Redis, "evalsha", broken)
    now[0] += 1.0
    with pytest.raises(RuntimeError):  # the probe's failure is not hidden ...
        store.acquire("GET:a", scope="s")
    monkeypatch.setattr(redis.Redis, "evalsha", real)
    now[0] += 1.0
    store.acquire("GET:a", scope="s")
    assert store.available, "a probe that raised something else kept the store local for good"


def test_an_acquire_that_lands_late_still_sees_a_block(
    make_store: Callable[..., RedisBucketStore], redis_url: str
) -> None:
    shift = [0.0]
    late = make_store(clock=lambda: time.monotonic() + shift[0])
    assert late.acquire("GET:warm", scope="s") == 0.0  # learns Redis time against its clock
    make_store().block("GET:a", 30.0, scope="s")  # another process
    shift[0] = -10.0  # every deadline this store computes has passed when its script runs
    assert late.acquire("GET:a", scope="s") > 25, "a late acquire sent into a fleet-wide block"
    shift[0] = -20.0
    assert late.acquire("GET:b", scope="s") == 0.0  # not blocked: asked again, and sent


def test_the_pace_of_a_long_block_outlives_the_block(
    make_store: Callable[..., RedisBucketStore], raw: Any
) -> None:
    store = make_store()
    assert store.acquire("GET:a", scope="s") == 0.0
    store.block("GET:a", 300.0, scope="s")  # a Retry-After longer than the longest pace TTL
    pace_key = _block_key(store, "s", "GET:a").replace(":block", ":pace")
    assert raw.exists(pace_key)
    assert raw.pttl(pace_key) >= raw.pttl(_block_key(store, "s", "GET:a")), "the pace expires before the block"


#: Where the library's and redis-py's frames come from (the test's own frames hold the URLs it wrote).
_LIBRARY_DIRS = (str(Path(str(sys.modules["service_client"].__file__)).parent), str(Path(redis.__file__).parent))


def _library_locals(exc: BaseException) -> str:
    """The locals of the library's and redis-py's frames in ``exc``'s traceback and chain, as
    ``TracebackException(capture_locals=True)`` records them (Sentry, pytest --showlocals)."""
    seen: list[str] = []
    current: BaseException | None = exc
    while current is not None:
        record = traceback.TracebackException.from_exception(current, capture_locals=True)
        for frame in record.stack:
            if frame.filename.startswith(_LIBRARY_DIRS):
                seen.extend(f"{k}={v}" for k, v in (frame.locals or {}).items())
        current = current.__cause__ or current.__context__
    return "\n".join(seen)


@pytest.mark.parametrize("url", [
    "redis://:12/Xy9+secret@10.0.0.5:6379/0",  # connected to localhost:12 and printed it whole
    "unix://:pa/secret@/tmp/x.sock",
    "redis://:ab/secret@host:6379/0",  # redis-py's error quoted the password's start
])
def test_a_password_with_an_unencoded_slash_is_refused_without_showing_it(url: str) -> None:
    with pytest.raises(ValueError, match="percent-encode") as info:
        RedisBucketStore(url)
    assert "secret" not in str(info.value) and info.value.__context__ is None
    assert "secret" not in _library_locals(info.value)
