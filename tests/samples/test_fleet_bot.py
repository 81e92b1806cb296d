"""Tests of the fleet sample (``samples/fleet_bot.py``): its socket process and two of its workers
against the emulator and a redis-server of this module's own, driven through the pytest plugin's
world as a bot author would drive them. Marked ``redis``."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service_client import Client

pytestmark = pytest.mark.redis

pytest.importorskip("redis")

from fleet.redis_server import RedisServer  # noqa: E402 - tests/fleet, a package beside this one
from fleet_bot import build_socket_process, build_standby, build_worker  # noqa: E402


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    try:
        server = RedisServer()
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the fleet sample's tests, but {exc}")
        pytest.skip(str(exc))
    yield server.url
    server.stop()


@pytest.fixture
def bot_factory(redis_url: str) -> Callable[..., Client]:
    """The socket process of the sample: its client, with its publisher (which stops with it)."""
    return lambda **options: build_socket_process(redis_url, **options)[0]


@pytest.fixture
def workers(bot_world: Any, bot_client: Client, redis_url: str) -> Iterator[list[Any]]:
    made = [build_worker(redis_url, bot_world.bot.token.get(), name, base_url=bot_world.emulator.base_url)
            for name in ("w1", "w2")]
    for worker in made:
        worker.start(timeout=15)
    yield made
    for worker in made:
        worker.stop(timeout=2)


def test_ping_is_answered_by_a_worker(workers: list[Any], say: Any, expect_reply: Any) -> None:
    said = say("general", "!ping")
    reply = expect_reply(said, timeout=15)
    assert reply.content == "Pong!" and reply.reply_to_id == said.id


def test_a_slow_command_holds_only_its_own_channel(workers: list[Any], say: Any, expect_reply: Any) -> None:
    slow = say("general", "!slow 2")
    started = time.monotonic()
    quick = say("random", "!who")
    assert expect_reply(quick, timeout=15).content.startswith("Worker w")
    assert time.monotonic() - started < 2  # random was answered while general's command worked
    assert expect_reply(slow, timeout=15).content == "Done after 2 s."


def test_a_worker_that_stops_hands_its_channels_over(workers: list[Any], bot_world: Any, say: Any,
                                                     expect_reply: Any) -> None:
    said = say("general", "!who")
    first = expect_reply(said, timeout=15).content
    owner = next(w for w in workers if w.name in first)
    owner.stop()
    said = say("general", "!who")
    other = next(w for w in workers if w is not owner)
    assert expect_reply(said, timeout=15).content == f"Worker {other.name} handles this channel."


def test_standby_socket_processes_take_over_and_the_bot_still_answers(bot_world: Any, redis_url: str, say: Any,
                                                                      expect_reply: Any) -> None:
    token = bot_world.bot.token.get()
    urls = {"base_url": bot_world.emulator.base_url, "socket_url": bot_world.emulator.socket_url}
    first, second = build_standby(redis_url, token, **urls), build_standby(redis_url, token, **urls)
    worker = build_worker(redis_url, token, "w1", base_url=bot_world.emulator.base_url)
    try:
        first.start()
        assert first.wait_active(15)
        second.start()
        worker.start(timeout=15)
        assert expect_reply(say("general", "!ping"), timeout=15).content == "Pong!"
        first.stop()  # hands the socket lease over
        assert second.wait_active(10)
        assert expect_reply(say("general", "!ping"), timeout=15).content == "Pong!"
    finally:
        worker.stop(timeout=2)
        first.stop()
        second.stop()
