"""The bot's scheduled work in the test world: ``bot_world.advance`` and ``client_close``."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from service_client import Client, ManualClock, MonotonicClock
from service_client.errors import ServiceError
from service_client.pytest_plugin import BotWorld, ListenerErrors


def test_a_one_hour_reminder_is_sent_when_the_world_s_clock_reaches_it(
    bot_world: BotWorld, bot_client: Client
) -> None:
    assert bot_client.clock is bot_world.clock and isinstance(bot_world.clock, ManualClock)
    handle = bot_client.call_later(3600, bot_client.send_message, bot_world.general.id, "stand-up!")
    assert handle.when() == 3600.0
    assert bot_world.advance(3599.5) == 0 and not handle.done()
    with bot_world.expect_message("general") as got:
        assert bot_world.advance(0.5) == 1  # returns once the message was sent
    assert got.result().content == "stand-up!"
    assert handle.done() and not handle.cancelled()


def test_a_repeating_task_of_the_bot_runs_once_per_interval_over_a_day(
    bot_world: BotWorld, bot_client: Client
) -> None:
    runs: list[tuple[float, str]] = []

    @bot_client.every(hours=1)
    def hourly() -> None:
        runs.append((bot_client.clock.now(), threading.current_thread().name))

    hourly.start()
    assert bot_world.advance(24 * 3600) == 25  # at start, then every hour up to +24 h
    assert [t for t, _ in runs] == [3600.0 * i for i in range(25)]
    assert all(name.startswith("service_client-events-") for _, name in runs)  # the bot's worker pool


def test_scheduled_work_that_raises_fails_the_test_like_a_listener(
    bot_world: BotWorld, bot_client: Client, listener_errors: ListenerErrors
) -> None:
    def broken_reminder() -> None:
        raise RuntimeError("the reminder store is gone")

    bot_client.call_later(60, broken_reminder)
    bot_world.advance(60)
    assert isinstance(listener_errors.wait(RuntimeError, match="reminder store"), RuntimeError)


def test_an_error_listener_receives_what_scheduled_work_raised(bot_world: BotWorld, bot_client: Client) -> None:
    got: list[BaseException] = []
    seen = threading.Event()

    @bot_client.on("error")
    def on_error(error: Exception) -> None:
        got.append(error)
        seen.set()

    @bot_client.every(seconds=5, count=1)
    def failing() -> None:
        raise LookupError("no such channel")

    failing.start()
    bot_world.advance(0)
    assert seen.wait(5) and isinstance(got[0], LookupError)


def test_destroy_cancels_scheduled_work_stops_its_thread_and_runs_client_close(
    bot_world: BotWorld, bot_client: Client
) -> None:
    bot_client.set_clock(None)  # real time: the scheduler's thread waits for the hour
    assert isinstance(bot_client.clock, MonotonicClock)
    handle = bot_client.call_later(3600, print, "never")
    task = bot_client.every(minutes=5)(print)
    task.start("also never")
    thread = bot_client._scheduler.thread
    assert thread is not None and thread.name.startswith("service_client-scheduler-") and thread.is_alive()
    closed: list[tuple[str, str]] = []

    @bot_client.on("client_close")
    def clean_up() -> None:
        closed.append((bot_client.state.value, threading.current_thread().name))

    bot_client.destroy()
    assert handle.cancelled() and not task.is_running()
    assert not thread.is_alive()
    assert len(closed) == 1 and closed[0][0] == "destroyed"
    assert closed[0][1].startswith("service_client-events-")  # on the worker pool
    bot_client.destroy()
    assert len(closed) == 1  # once
    with pytest.raises(ServiceError, match="destroyed"):
        bot_client.call_later(1, print)


def test_client_close_runs_when_destroy_is_called_from_a_listener(
    bot_world: BotWorld, bot_client: Client, say: Any
) -> None:
    threads: dict[str, str] = {}
    closed = threading.Event()

    @bot_client.on("client_close")
    def clean_up() -> None:
        threads["close"] = threading.current_thread().name
        closed.set()

    @bot_client.on("message_create")
    def stop(message: Any) -> None:
        if message.content == "stop":
            threads["destroy"] = threading.current_thread().name
            bot_client.destroy()  # on a worker: client_close runs right here, no deadlock

    say("general", "stop")
    assert closed.wait(5)
    assert threads["close"] == threads["destroy"]


def test_a_client_built_during_the_test_gets_the_world_s_clock_without_being_told(
    bot_world: BotWorld, service_emulator: Any
) -> None:
    client = Client(base_url=service_emulator.base_url, socket_url=service_emulator.socket_url)
    try:
        assert client.clock is bot_world.clock  # no set_clock, no attach_bot: built in the world
        handle = client.call_later(60, print, "later")
        assert bot_world.advance(59) == 0 and not handle.done()
    finally:
        client.destroy()


def test_the_world_s_clock_tells_wall_clock_time_that_moves_with_advance(bot_world: BotWorld, bot_client: Client) -> None:
    import datetime

    start = bot_client.clock.utcnow()
    assert start.tzinfo == datetime.timezone.utc
    bot_world.advance(86400)
    assert bot_client.clock.utcnow() - start == datetime.timedelta(days=1)
