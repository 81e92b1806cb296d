"""``Client(max_messages=...)``: how many recent messages the client keeps whole, so that a
reaction event carries its message; None keeps none, while reaction events still name the
channel of a recent message."""

from __future__ import annotations

import functools
import queue
from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, Message, ReactionEvent
from service_client.testing import BotWorld

LOCAL = {"base_url": "http://127.0.0.1:1/api/v2", "socket_url": "http://127.0.0.1:1"}


@pytest.mark.parametrize(
    ("value", "error", "text"),
    [
        ("5", TypeError, "max_messages must be an int or None, got str"),
        (5.0, TypeError, "max_messages must be an int or None, got float"),
        (True, TypeError, "max_messages must be an int or None, got bool"),
        (0, ValueError, r"max_messages must be at least 1 \(None keeps no messages\), got 0"),
        (-3, ValueError, "max_messages must be at least 1"),
    ],
)
def test_a_bad_max_messages_is_refused_naming_it(value: Any, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        Client(max_messages=value, **LOCAL)


@pytest.mark.parametrize("value", [None, 1, 1000, 50_000])
def test_max_messages_sizes_the_connection_states_cache(value: int | None) -> None:
    client = Client(max_messages=value, **LOCAL)
    try:
        assert client._connection.max_messages == value
    finally:
        client.destroy()


def test_the_default_keeps_1000_messages() -> None:
    client = Client(**LOCAL)
    try:
        assert client._connection.max_messages == 1000
    finally:
        client.destroy()


def _said(bot_world: BotWorld, bot_client: Client, count: int) -> list[Message]:
    """``count`` messages said in general, each received by the bot before this returns."""
    arrived: queue.Queue[Message] = queue.Queue()
    bot_client.on("message_create", arrived.put)
    said = [bot_world.say("general", f"message {i}") for i in range(count)]
    received = [arrived.get(timeout=10).id for _ in said]
    assert received == [m.id for m in said]
    bot_client.off("message_create", arrived.put)
    return said


def _reacted(bot_world: BotWorld, bot_client: Client, message: Message) -> ReactionEvent:
    """The bot's reaction event for an emoji put on ``message``."""
    seen: queue.Queue[ReactionEvent] = queue.Queue()
    bot_client.on("message_reaction_add", lambda info, user, message_id: seen.put(info))
    bot_world.react(message, "👍")
    info = seen.get(timeout=10)
    assert info.message_id == message.id
    return info


class TestTwoMessages:
    @pytest.fixture
    def bot_factory(self) -> Callable[..., Client]:
        return functools.partial(Client, max_messages=2)

    def test_only_the_recent_messages_are_kept_whole(self, bot_world: BotWorld, bot_client: Client) -> None:
        # Two generations of 2: messages 0 and 1 fill one, 2 and 3 the next (0 and 1 go), 4 starts a third.
        said = _said(bot_world, bot_client, 5)
        general = bot_world.channel("general").id
        old = _reacted(bot_world, bot_client, said[0])
        assert old.message is None and old.channel_id == general      # its channel is still known
        recent = _reacted(bot_world, bot_client, said[4])
        assert recent.message is not None and recent.message.content == "message 4"
        assert recent.channel_id == general and recent.server_id == bot_world.server.id


class TestNoMessages:
    @pytest.fixture
    def bot_factory(self) -> Callable[..., Client]:
        return functools.partial(Client, max_messages=None)

    def test_no_message_is_kept_whole_but_its_channel_is(self, bot_world: BotWorld, bot_client: Client) -> None:
        said = _said(bot_world, bot_client, 1)
        info = _reacted(bot_world, bot_client, said[0])
        assert info.message is None
        assert info.channel_id == bot_world.channel("general").id
        assert bot_client._connection.cached_message(said[0].id) is None
