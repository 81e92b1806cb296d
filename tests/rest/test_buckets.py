"""The bucket store interface without a Redis server: the in-memory store, the scope hash,
the session's use of a store, and the argument checks of RedisBucketStore and Client."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import responses

from service_client import BucketStore, Client, MemoryBucketStore, RedisBucketStore
from service_client.rest import PaceWait, RestSession, Route, bucket_scope

TOKEN = "bot-token-that-must-never-show-9f8e7d"


def test_memory_store_speaks_in_delays_and_blocks_only_move_later() -> None:
    now = [100.0]
    store = MemoryBucketStore(clock=lambda: now[0])
    assert isinstance(store, BucketStore)
    assert store.acquire("GET:x") == 0.0 and store.wait_time("GET:x") == 0.0
    store.block("GET:x", 5.0)
    assert store.wait_time("GET:x") == 5.0 and store.acquire("GET:x") == 5.0
    store.block("GET:x", 1.0)  # an earlier end never shortens the block
    assert store.wait_time("GET:x") == 5.0
    now[0] = 102.0
    store.block("GET:x", 4.0)  # a later end moves it
    assert store.wait_time("GET:x") == 4.0
    store.block("GET:y", -3.0)  # a negative delay blocks nothing
    assert store.wait_time("GET:y") == 0.0
    now[0] = 106.0
    assert store.acquire("GET:x") == 0.0 and len(store) == 0


def test_memory_store_block_is_atomic_under_concurrent_writers() -> None:
    store = MemoryBucketStore()
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        start.wait(5)
        for i in range(200):
            store.block("GET:x", 100.0 + ((n * 200 + i) % 37))

    threads = [threading.Thread(target=writer, args=(n,), name=f"test-writer-{n}") for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert store.wait_time("GET:x") > 135.0  # the longest delay (136 s) won, whatever the interleaving


def test_bucket_scope_is_a_stable_one_way_hash() -> None:
    scope = bucket_scope(TOKEN)
    assert scope == bucket_scope(TOKEN) != bucket_scope(TOKEN + "x")
    assert len(scope) == 32 and int(scope, 16) >= 0
    assert TOKEN not in scope and "bot-token" not in scope


class _RecordingStore:
    """A BucketStore that records the calls the session makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def wait_time(self, key: str, *, scope: str = "") -> float:
        self.calls.append(("wait_time", key, scope))
        return 0.0

    def acquire(self, key: str, *, scope: str = "") -> float:
        self.calls.append(("acquire", key, scope))
        return 0.0

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        self.calls.append(("block", key, scope))


def test_session_asks_the_store_with_the_token_scope_never_the_token() -> None:
    store = _RecordingStore()
    session = RestSession("http://127.0.0.1:1/v2", user_agent="t", bucket_store=store)
    session.token = TOKEN
    with responses.RequestsMock() as rsps:
        rsps.add("GET", session.base_url + "/servers/S1/members", status=429, headers={"Retry-After": "0"})
        rsps.add("GET", session.base_url + "/servers/S1/members", json={})
        try:
            session.request(Route("GET", "/servers/S1/members"), retry=1)
        finally:
            session.close()
    kinds = [call[0] for call in store.calls]
    # checked on entry, a permit before each send, the 429 recorded, then again for the retry
    assert kinds == ["wait_time", "acquire", "block", "wait_time", "acquire"]
    assert {call[1] for call in store.calls} == {"GET:servers/S1"}
    assert {call[2] for call in store.calls} == {bucket_scope(TOKEN)}


class _PacingStore:
    """A pacing store: its first ``acquire`` answers a pace wait (with ``turn``), the next ones a permit."""

    def __init__(self, turn: int | None) -> None:
        self.turn = turn
        self.asked: list[int | None] = []

    def wait_time(self, key: str, *, scope: str = "") -> float:
        return 0.0

    def acquire(self, key: str, *, scope: str = "", turn: int | None = None) -> float:
        self.asked.append(turn)
        return PaceWait(0.01, turn=self.turn) if len(self.asked) == 1 else 0.0

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        pass


class _OldPacingStore:
    """A pacing store written before turns: ``acquire`` takes no ``turn``."""

    def __init__(self) -> None:
        self.asked = 0

    def wait_time(self, key: str, *, scope: str = "") -> float:
        return 0.0

    def acquire(self, key: str, *, scope: str = "") -> float:
        self.asked += 1
        return PaceWait(0.01) if self.asked == 1 else 0.0

    def block(self, key: str, delay: float, *, scope: str = "") -> None:
        pass


@pytest.mark.parametrize("store", [_PacingStore(turn=42), _PacingStore(turn=None), _OldPacingStore()])
def test_the_session_passes_a_turn_back_only_to_the_store_that_gave_it(store: Any) -> None:
    session = RestSession("http://127.0.0.1:1/v2", user_agent="t", bucket_store=store)
    session.token = TOKEN
    with responses.RequestsMock() as rsps:
        rsps.add("GET", session.base_url + "/servers/S1/members", json={})
        try:
            assert session.request(Route("GET", "/servers/S1/members")) == {}
        finally:
            session.close()
    if isinstance(store, _PacingStore):
        # Back after its pace wait with the turn the store gave it (and none when it gave none).
        assert store.asked == [None, store.turn]
    else:
        assert store.asked == 2  # a store without turns is never given one


def test_session_and_client_refuse_an_object_that_is_not_a_store() -> None:
    with pytest.raises(TypeError, match="bucket_store must implement BucketStore"):
        RestSession("http://127.0.0.1:1/v2", user_agent="t", bucket_store=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bucket_store"):
        Client(base_url="http://127.0.0.1:1/v2", socket_url="http://127.0.0.1:1",
               bucket_store={"GET:x": 1.0})  # type: ignore[arg-type]


def test_client_uses_the_store_it_is_given() -> None:
    store = MemoryBucketStore()
    client = Client(base_url="http://127.0.0.1:1/v2", socket_url="http://127.0.0.1:1", bucket_store=store)
    try:
        assert client._rest.bucket_store is store
    finally:
        client.destroy()


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"redis": 6379}, TypeError, "redis.Redis client or a URL"),
        ({"redis": "http://127.0.0.1:6379"}, ValueError, "scheme"),
        ({"namespace": ""}, ValueError, "namespace"),
        ({"namespace": "a{b}"}, ValueError, "braces"),
        ({"namespace": "two words"}, ValueError, "spaces"),
        ({"namespace": 5}, TypeError, "namespace"),
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": float("nan")}, ValueError, "timeout"),
        ({"timeout": "50ms"}, TypeError, "timeout"),
        ({"retry_interval": -1}, ValueError, "retry_interval"),
        ({"pace": 1}, TypeError, "pace"),
    ],
)
def test_redis_store_checks_its_arguments_before_any_io(kwargs: dict[str, Any], error: type, text: str) -> None:
    pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")
    args: dict[str, Any] = {"redis": "redis://127.0.0.1:1/0", **kwargs}
    with pytest.raises(error, match=text):
        RedisBucketStore(**args)


def test_redis_store_repr_shows_no_url_or_password() -> None:
    pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")
    store = RedisBucketStore("redis://user:s3cret-pass@127.0.0.1:1/0", namespace="prod")
    try:
        text = repr(store)
        assert "s3cret" not in text and "prod" in text
        assert store.key_prefix == "service_client:prod:" and store.namespace == "prod"
        assert RedisBucketStore("redis://127.0.0.1:1/0").key_prefix == "service_client:"
    finally:
        store.close()
