"""Fixtures of the events fleet's tests: a redis-server of the module's own, a socket process
(a Client and its EventPublisher on the emulator) and a factory of workers.

Each test has its own namespace, so tests never see each other's streams. The Redis tests are
marked ``redis`` (left out of the default run; CI runs ``python -m pytest -m redis``); without
the ``redis-server`` binary they skip with the reason, except under CI (``CI`` set), where they
fail.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from service_client import Client

from .redis_server import RedisServer


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server of this module's own on a free port; without the binary skip (or fail under CI)."""
    try:
        server = RedisServer()
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the events fleet's Redis tests, but {exc}")
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture
def raw(redis_url: str) -> Iterator[Any]:
    """A plain redis-py client, to look at the keys as an operator would."""
    redis = pytest.importorskip("redis")
    conn = redis.Redis.from_url(redis_url, socket_timeout=5)
    yield conn
    conn.close()


@pytest.fixture
def namespace() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


@dataclass
class Gateway:
    """The socket's process of a test: the bot's client (logged in) and its publisher."""

    client: Client
    publisher: Any
    namespace: str


@pytest.fixture
def gateway(world: Any, make_client: Callable[..., Client], redis_url: str, namespace: str) -> Iterator[Gateway]:
    from service_client.fleet import EventPublisher

    client = make_client()
    publisher = EventPublisher(client, redis_url, partitions=8, namespace=namespace)
    client.login(world.bot_token, timeout=15)
    assert publisher.flush(10)
    yield Gateway(client, publisher, namespace)
    publisher.close()


@pytest.fixture
def make_worker(world: Any, emulator: Any, redis_url: str, namespace: str) -> Iterator[Callable[..., Any]]:
    """Factory of workers of the world's bot on the test's namespace (group ``g``); all stopped afterwards."""
    from service_client.fleet import FleetWorker

    made: list[FleetWorker] = []

    def make(**options: Any) -> FleetWorker:
        options.setdefault("group", "g")
        options.setdefault("namespace", namespace)
        options.setdefault("base_url", emulator.base_url)
        options.setdefault("workers", 4)
        worker = FleetWorker(redis_url, world.bot_token, **options)
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.stop(timeout=2)
