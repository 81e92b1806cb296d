"""Catch-up after a gap: messages posted while the socket was away reach listeners, marked replayed.

Against the emulator: the bot's transport is dropped and the service kept unreachable while a
human posts, then the socket comes back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from service_client import CatchUp, Client


def _recorder(bot: Client) -> tuple[list[tuple[str, bool]], threading.Condition]:
    got: list[tuple[str, bool]] = []
    changed = threading.Condition()

    @bot.on("message_create")
    def on_message(message: Any) -> None:
        with changed:
            got.append((message.content, message.replayed))
            changed.notify_all()

    return got, changed


def _wait(changed: threading.Condition, test: Callable[[], bool], timeout: float = 10) -> None:
    with changed:
        assert changed.wait_for(test, timeout), "timed out"


def _gap(bot: Client, emulator: Any, world: Any, post: Callable[[], None]) -> None:
    """Drop the bot's socket, keep the service away while ``post`` runs, then let it back."""
    disconnected = threading.Event()
    reconnected = threading.Event()
    bot.on("disconnect", lambda reason: disconnected.set())
    bot.on("reconnect", reconnected.set)
    emulator.set_outage(30)
    emulator.drop_transport(world.bot["publicId"])
    assert disconnected.wait(10)
    post()
    emulator.set_outage(None)
    assert reconnected.wait(10)


def test_messages_posted_during_a_gap_are_replayed_once_and_marked(
        world: Any, emulator: Any, make_client: Callable[..., Client]) -> None:
    bot = make_client(catch_up=CatchUp())
    bot.login(world.bot_token, timeout=15)
    got, changed = _recorder(bot)
    general, human = world.general["publicId"], world.human["publicId"]
    random_channel = next(c["publicId"] for c in world.channels if c["name"] == "random")
    emulator.post_message(general, human, "before")
    emulator.post_message(random_channel, human, "before in random")
    _wait(changed, lambda: len(got) == 2)

    def post() -> None:
        for i in range(3):
            emulator.post_message(general, human, f"gap {i}")
        emulator.post_message(random_channel, human, "random gap")

    _gap(bot, emulator, world, post)
    _wait(changed, lambda: len(got) == 6)
    emulator.post_message(general, human, "after")
    _wait(changed, lambda: len(got) == 7)
    assert got[:2] == [("before", False), ("before in random", False)]
    replayed = got[2:6]
    assert all(flag for _, flag in replayed)
    general_order = [text for text, _ in replayed if text.startswith("gap ")]
    assert general_order == ["gap 0", "gap 1", "gap 2"]  # oldest first within a channel
    assert ("random gap", True) in replayed
    assert got[6] == ("after", False)
    assert bot.catch_up is not None and bot.catch_up.last is not None
    assert bot.catch_up.last.replayed == 4 and bot.catch_up.last.incomplete == []


def test_the_budget_bounds_the_requests_and_what_it_missed_is_logged(
        world: Any, emulator: Any, make_client: Callable[..., Client], caplog: pytest.LogCaptureFixture) -> None:
    bot = make_client(catch_up=CatchUp(max_requests=1))
    bot.login(world.bot_token, timeout=15)
    got, changed = _recorder(bot)
    general, human = world.general["publicId"], world.human["publicId"]
    emulator.post_message(general, human, "before")
    _wait(changed, lambda: len(got) == 1)
    with caplog.at_level(logging.INFO, logger="service_client.catchup"):
        _gap(bot, emulator, world, lambda: emulator.post_messages(general, human, [f"m{i}" for i in range(150)]))
        _wait(changed, lambda: len(got) == 101)
        assert bot.catch_up is not None
        _wait(changed, lambda: bot.catch_up is not None and bot.catch_up.last is not None)
    # One request of 100 messages: the newest 100 of the 150, oldest first.
    assert [text for text, _ in got[1:]] == [f"m{i}" for i in range(50, 150)]
    assert bot.catch_up.last.requests == 1 and bot.catch_up.last.incomplete == [general]
    assert any("catch-up stopped before the gap's start" in r.getMessage() for r in caplog.records)


def test_a_client_without_catch_up_replays_nothing(world: Any, emulator: Any,
                                                   make_client: Callable[..., Client]) -> None:
    bot = make_client()
    bot.login(world.bot_token, timeout=15)
    got, changed = _recorder(bot)
    general, human = world.general["publicId"], world.human["publicId"]
    emulator.post_message(general, human, "before")
    _wait(changed, lambda: len(got) == 1)
    _gap(bot, emulator, world, lambda: emulator.post_message(general, human, "lost"))
    emulator.post_message(general, human, "after")
    _wait(changed, lambda: len(got) == 2)
    assert got == [("before", False), ("after", False)]
    assert bot.catch_up is None


def test_catch_up_policy_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="window must be a finite number"):
        CatchUp(window=0)
    with pytest.raises(TypeError, match="max_requests must be an int"):
        CatchUp(max_requests=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_pages must be at least 1"):
        CatchUp(max_pages=0)
    with pytest.raises(TypeError, match="catch_up must be a CatchUp"):
        Client(catch_up={"window": 10})  # type: ignore[arg-type]


def test_destroy_waits_for_a_catch_up_in_progress(world: Any, emulator: Any,
                                                  make_client: Callable[..., Client]) -> None:
    bot = make_client(catch_up=CatchUp())
    bot.login(world.bot_token, timeout=15)
    got, changed = _recorder(bot)
    general, human = world.general["publicId"], world.human["publicId"]
    emulator.post_message(general, human, "before")
    _wait(changed, lambda: len(got) == 1)
    runner = bot.catch_up
    assert runner is not None
    started, ended = threading.Event(), threading.Event()
    never = threading.Event()

    def replay(marks: Any) -> None:
        """A catch-up still finishing its last request when the client is destroyed."""
        started.set()
        assert runner is not None and runner._closed.wait(10)  # destroy() began
        never.wait(0.1)  # the last request's answer, still on its way
        ended.set()

    runner.replay = replay  # type: ignore[method-assign]
    _gap(bot, emulator, world, lambda: emulator.post_message(general, human, "gap"))
    assert started.wait(10)
    bot.destroy()
    assert ended.is_set(), "destroy() returned with the catch-up thread still running"
    assert not [t for t in threading.enumerate() if t.name.startswith("service_client-catchup-")]
