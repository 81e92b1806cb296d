"""RedisBucketStore facing a hostile or broken Redis: its password, its connections, poisoned keys.

- The password is held in the library's secret type: no object that a store (or a model, through
  its state) reaches holds it in the clear.
- ``close()`` closes every connection of the pool the store made, in each fault scenario, and
  leaves a client given to the store open.
- A key of one bucket that the scripts cannot use (another type, a field that is not a number)
  keeps that bucket on the process's own table, logged once naming the key; every other bucket
  is still shared. An error about the whole server still opens the circuit.

Each test runs against a redis-server of this module's own (``conftest.py``) under a namespace of
its own. Marked ``redis``: ``python -m pytest -m redis`` runs them.
"""

from __future__ import annotations

import concurrent.futures
import gc
import logging
import time
import types
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.redis  # left out of the default run: python -m pytest -m redis

redis = pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")

from service_client import Client, RedisBucketStore  # noqa: E402
from service_client._secret import Secret  # noqa: E402

from .redis_proxy import RedisProxy, RedisServer  # noqa: E402


def _until(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    """Poll ``condition`` (something only a later call can show) until true, within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def _pace_key(store: RedisBucketStore, scope: str, bucket: str) -> str:
    """The documented key layout: ``<prefix>{<scope>/<bucket>}:pace``."""
    return f"{store.key_prefix}{{{scope}/{bucket}}}:pace"


# ============================================================================ the password

#: Objects the walk does not enter: the secret type (it holds the password on purpose and never
#: shows it), and code, classes and modules (their globals reach the whole interpreter).
_NOT_ENTERED = (Secret, type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.CodeType,
                types.FrameType)


def _strings_reachable_from(root: object, limit: int = 2_000_000) -> Iterator[str | bytes]:
    """Every str and bytes that ``root`` reaches through attributes, slots, containers and bound
    methods (what ``vars()``, a debugger or a serializer walking the object would see)."""
    seen: set[int] = set()
    stack: list[object] = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        assert len(seen) < limit, "the walk did not end"
        if isinstance(obj, (str, bytes)):
            yield obj
        elif not isinstance(obj, _NOT_ENTERED):
            stack.extend(gc.get_referents(obj))


def _holders_of(root: object, secret: str) -> list[str]:
    return [repr(text)[:80] for text in _strings_reachable_from(root)
            if secret in (text if isinstance(text, str) else text.decode("latin-1"))]


def test_the_password_is_held_as_a_secret_by_the_store_its_pool_and_its_connections(
    guarded_redis: RedisServer, namespace: str,
) -> None:
    password = guarded_redis.password
    assert password is not None
    store = RedisBucketStore(guarded_redis.url, namespace=namespace)
    try:
        with concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="test-acquire") as pool:
            list(pool.map(lambda n: store.acquire(f"GET:b{n}", scope="s"), range(16)))  # connections open
        assert store.available, "the store did not reach the password-protected Redis"
        assert all(password not in repr(value) for value in vars(store).values())
        assert _holders_of(store, password) == []
        assert password not in repr(store) and password not in store.url
    finally:
        store.close()


def test_no_model_reaches_the_redis_password_through_its_state(
    world: Any, make_client: Callable[..., Client], guarded_redis: RedisServer, namespace: str,
) -> None:
    password = guarded_redis.password
    assert password is not None
    store = RedisBucketStore(guarded_redis.url, namespace=namespace)
    try:
        bot = make_client(bucket_store=store)
        bot.login(world.bot_token, timeout=15)
        me = bot.user
        assert me is not None
        bot.api_call("/auth/me")  # the session has used the store: its pool has a connection
        assert store.available
        assert _holders_of(me, password) == []
    finally:
        store.close()


# ============================================================================ close()


def _connections_named(raw: Any, name: str) -> int:
    return sum(1 for entry in raw.client_list() if entry.get("name") == name)


def _use_from_threads(store: RedisBucketStore, calls: int = 64) -> None:
    """Calls from 8 threads at once: the pool opens several connections."""
    with concurrent.futures.ThreadPoolExecutor(8, thread_name_prefix="test-acquire") as pool:
        list(pool.map(lambda n: store.acquire(f"GET:b{n % 8}", scope="s"), range(calls)))


@pytest.mark.parametrize("scenario", ["direct", "partly slow", "stalled"])
def test_close_closes_every_connection_the_store_opened(
    scenario: str, redis_server: RedisServer, raw: Any, namespace: str,
) -> None:
    name = f"store-{uuid.uuid4().hex[:12]}"
    proxy = RedisProxy(redis_server.port) if scenario != "direct" else None
    try:
        url = proxy.url if proxy is not None else redis_server.url
        store = RedisBucketStore(f"{url}?client_name={name}", namespace=namespace, retry_interval=0.05)
        _use_from_threads(store)
        assert _connections_named(raw, name) >= 1
        if proxy is not None:
            proxy.set_slow(0.3, 0.2)  # some replies past the store's 50 ms bound
            if scenario == "stalled":
                _use_from_threads(store)
                proxy.set_slow(1.0, 5.0)  # every reply held: the calls of the next threads hang
            _use_from_threads(store)
        store.close()
        _until(lambda: _connections_named(raw, name) == 0,
               f"connections of a closed store still open: {_connections_named(raw, name)}")
        assert store.acquire("GET:x", scope="s") == 0.0  # a closed store answers from its own table ...
        store.block("GET:x", 5.0, scope="s")
        assert store.acquire("GET:x", scope="s") > 4
        time.sleep(0.1)  # (a connection opened now would be listed within this)
        assert _connections_named(raw, name) == 0  # ... and opens no connection
        store.close()  # idempotent
    finally:
        if proxy is not None:
            proxy.close()


def test_close_leaves_a_client_given_to_the_store_open(redis_server: RedisServer, raw: Any, namespace: str) -> None:
    name = f"owner-{uuid.uuid4().hex[:12]}"
    client = redis.Redis(host="127.0.0.1", port=redis_server.port, client_name=name)
    try:
        assert client.ping()
        own_id = client.client_id()
        store = RedisBucketStore(client, namespace=namespace)  # its own pool, with the client's settings
        _use_from_threads(store)
        assert _connections_named(raw, name) >= 2
        store.close()
        _until(lambda: _connections_named(raw, name) == 1, "the store's connections outlived close()")
        assert [entry["id"] for entry in raw.client_list() if entry.get("name") == name] == [str(own_id)]
        assert client.ping() and client.client_id() == own_id  # the caller's connection is untouched
    finally:
        client.close()


# ============================================================================ poisoned keys


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_poisoned_key_keeps_its_bucket_local_and_every_other_bucket_shared(
    make_store: Callable[..., RedisBucketStore], raw: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest.redis")
    store, other = make_store(), make_store()
    assert store.acquire("GET:a", scope="s") == 0.0 and store.acquire("GET:b", scope="s") == 0.0
    wrong_type = _pace_key(store, "s", "GET:a")
    raw.delete(wrong_type)
    raw.rpush(wrong_type, "not a hash")  # WRONGTYPE
    not_a_number = _pace_key(store, "s", "GET:b")
    raw.hset(not_a_number, "g", "many")  # the window's permit count is no integer
    for _ in range(50):
        assert store.acquire("GET:a", scope="s") == 0.0  # answered from this process's table
        assert store.acquire("GET:b", scope="s") == 0.0
    store.block("GET:a", 30.0, scope="s")
    assert store.acquire("GET:a", scope="s") > 25  # its blocks still hold here
    # Every other bucket is still shared: the circuit did not open.
    assert store.available
    for n in range(20):
        store.block(f"GET:c{n}", 30.0, scope="s")
        assert other.acquire(f"GET:c{n}", scope="s") > 25, f"bucket c{n} was not shared"
    said = _warnings(caplog)
    assert len(said) == 2, said  # once per poisoned bucket, naming its key
    assert any(wrong_type in line and "WRONGTYPE" in line for line in said), said
    assert any(not_a_number in line and "not an integer" in line for line in said), said
    assert all("every other bucket is still shared" in line for line in said)


def test_a_poisoned_bucket_is_shared_again_once_its_key_is_fixed(
    make_store: Callable[..., RedisBucketStore], raw: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="service_client.rest.redis")
    now = [1000.0]
    store, other = make_store(clock=lambda: now[0]), make_store()
    key = _pace_key(store, "s", "GET:a")
    raw.rpush(key, "not a hash")
    assert store.acquire("GET:a", scope="s") == 0.0
    now[0] += 5.0
    assert store.acquire("GET:a", scope="s") == 0.0  # still local: not asked again yet
    raw.delete(key)  # the operator fixes the key
    now[0] += 60.0
    assert store.acquire("GET:a", scope="s") == 0.0  # asked again: shared
    store.block("GET:a", 30.0, scope="s")
    assert other.acquire("GET:a", scope="s") > 25
    assert len(_warnings(caplog)) == 1
    assert any("shared again" in r.getMessage() for r in caplog.records)


def test_an_error_about_the_whole_server_still_opens_the_circuit(
    make_store: Callable[..., RedisBucketStore], raw: Any, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="service_client.rest.redis")
    store = make_store()
    assert store.acquire("GET:a", scope="s") == 0.0 and store.available
    raw.config_set("min-replicas-to-write", 1)  # no replica: every write is refused (NOREPLICAS)
    try:
        assert store.acquire("GET:a", scope="s") == 0.0
        assert not store.available, "a server-wide refusal was taken for one bucket's"
    finally:
        raw.config_set("min-replicas-to-write", 0)
    assert not [line for line in _warnings(caplog) if "values its scripts cannot use" in line]
