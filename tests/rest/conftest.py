"""Fixtures of the Redis bucket store tests: a redis-server of each test module's own, a plain
client to look at the keys, a namespace per test and a factory of stores on it.

Without the ``redis-server`` binary these fixtures skip with the reason, except under CI (``CI``
set), where they fail instead. The tests that use them are marked ``redis``: the default run
leaves them out, ``python -m pytest -m redis`` runs them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .redis_proxy import RedisProxy, RedisServer

if TYPE_CHECKING:
    from service_client import RedisBucketStore


def _start(password: str | None = None) -> RedisServer:
    try:
        return RedisServer(password=password)
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the Redis bucket store tests, but {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of this module's own on a free port."""
    server = _start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def guarded_redis() -> Iterator[RedisServer]:
    """A second redis-server, with a password."""
    server = _start(password="right-horse-battery")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def redis_url(redis_server: RedisServer) -> str:
    """The URL of the module's Redis server."""
    return redis_server.url


@pytest.fixture
def raw(redis_url: str) -> Iterator[Any]:
    """A plain redis-py client, to look at the keys as an operator would."""
    redis = pytest.importorskip("redis", reason="redis-py is not installed: pip install -e '.[redis]'")
    conn = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield conn
    conn.close()


@pytest.fixture
def namespace(raw: Any) -> Iterator[str]:
    """A namespace of this test alone; its keys are deleted afterwards (never FLUSHALL)."""
    name = f"test-{uuid.uuid4().hex}"
    yield name
    for key in raw.scan_iter(match=f"service_client:{name}:*", count=500):
        raw.delete(key)


@pytest.fixture
def make_store(redis_url: str, namespace: str) -> Iterator[Callable[..., RedisBucketStore]]:
    """Factory of stores on the test's namespace (by default); every one is closed afterwards."""
    from service_client import RedisBucketStore

    made: list[RedisBucketStore] = []

    def make(url: str | None = None, **options: Any) -> RedisBucketStore:
        options.setdefault("namespace", namespace)
        store = RedisBucketStore(url or redis_url, **options)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def proxy(redis_server: RedisServer) -> Iterator[RedisProxy]:
    """A TCP proxy to the module's Redis server (forwarding until told otherwise)."""
    made = RedisProxy(redis_server.port)
    yield made
    made.close()
