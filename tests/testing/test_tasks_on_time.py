"""Tasks that start on time: a task started in ``ready`` cannot race the test's first ``advance``.

The ``bot_client`` fixture returns once the bot's ``ready`` listeners have run, a task may be
declared to start at ``ready`` by itself (``start_on_ready=True``), and a task may wait for
the client with ``before_loop`` and ``client.wait_until_ready()``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from service_client import Client, ManualClock, ServiceError, ServiceTimeoutError
from service_client.pytest_plugin import BotWorld

TICKS: list[float] = []


def hourly_bot(**urls: Any) -> Client:
    """The Scheduled work guide's first pattern: an hourly task started in a ``ready`` listener."""
    client = Client(**urls)

    @client.every(hours=1)
    def tick() -> None:
        TICKS.append(client.clock.now())

    @client.on("ready")
    def start_tasks() -> None:
        time.sleep(0.002)  # a ready listener that takes a moment: the test must not begin before it ends
        tick.start()

    return client


@pytest.fixture
def bot_factory() -> Iterator[Callable[..., Client]]:
    TICKS.clear()
    yield hourly_bot


@pytest.mark.parametrize("attempt", range(30))
def test_a_task_started_in_a_ready_listener_runs_at_the_first_advance(
    attempt: int, bot_world: BotWorld, bot_client: Client
) -> None:
    assert bot_world.advance(0) == 1
    assert TICKS == [0.0]


def test_a_task_declared_to_start_at_ready_is_started_before_login_returns(service_emulator: Any) -> None:
    from service_client.testing import BotWorld as World

    world = World(service_emulator)
    try:
        client = Client(base_url=service_emulator.base_url, socket_url=service_emulator.socket_url)
        client.set_clock(world.clock)
        runs: list[float] = []

        @client.every(minutes=30, start_on_ready=True)
        def report() -> None:
            runs.append(client.clock.now())

        assert not report.is_running()  # nothing before ready
        try:
            client.login(world.bot.token.get() or "", timeout=15)
            assert report.is_running() and report.next_run == 0.0  # no listener, no fixture: at once
            assert world.advance(3600) == 3
            assert runs == [0.0, 1800.0, 3600.0]

            @client.every(minutes=30, start_on_ready=True)
            def late() -> None:
                """Declared once the client is ready: started at once."""

            assert late.is_running()
        finally:
            client.destroy()
    finally:
        world.close()


def test_before_loop_waits_until_the_client_is_ready(service_emulator: Any) -> None:
    from service_client.testing import BotWorld as World

    world = World(service_emulator)
    client = Client(base_url=service_emulator.base_url, socket_url=service_emulator.socket_url)
    clock = ManualClock()
    client.set_clock(clock)
    order: list[str] = []

    @client.every(hours=1)
    def leaderboard() -> None:
        order.append(f"run as {client.user.id if client.user else None}")

    @leaderboard.before_loop
    def wait_for_the_client() -> None:
        client.wait_until_ready(timeout=15)
        order.append("ready")

    leaderboard.start()  # before login: the first run waits for the client
    advancing = threading.Thread(target=clock.advance, args=(0,), kwargs={"timeout": 20}, name="test-advance")
    try:
        advancing.start()
        client.login(world.bot.token.get() or "", timeout=15)
        advancing.join(20)
        assert order == ["ready", f"run as {world.bot.id}"]
        assert clock.advance(3600) == 1 and len(order) == 3  # before_loop ran once per start
    finally:
        client.destroy()
        world.close()


def test_wait_until_ready_times_out_and_fails_once_destroyed() -> None:
    client = Client(base_url="http://127.0.0.1:9/api/v2", socket_url="http://127.0.0.1:9")
    with pytest.raises(ServiceTimeoutError, match="not ready within 0.05 s"):
        client.wait_until_ready(timeout=0.05)
    with pytest.raises(ValueError, match="timeout"):
        client.wait_until_ready(timeout=-1)
    waiting: list[BaseException] = []

    def wait() -> None:
        try:
            client.wait_until_ready()
        except ServiceError as exc:
            waiting.append(exc)

    thread = threading.Thread(target=wait, name="test-wait-ready")
    thread.start()
    client.destroy()
    thread.join(5)
    assert not thread.is_alive() and "destroyed" in str(waiting[0])


def test_a_before_loop_that_raises_stops_the_task(bot_world: BotWorld, bot_client: Client, listener_errors: Any) -> None:
    listener_errors.expect(LookupError, match="no leaderboard channel")
    runs: list[int] = []

    @bot_client.every(hours=1)
    def leaderboard() -> None:
        runs.append(1)

    @leaderboard.before_loop
    def find_channel() -> None:
        raise LookupError("no leaderboard channel")

    leaderboard.start()
    assert bot_world.advance(7200) == 1 + len(TICKS)  # its before_loop once, and the bot's hourly ticks
    assert runs == [] and not leaderboard.is_running()
