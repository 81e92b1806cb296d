"""Sending where the bot cannot send fails fast and says why: at once when the caches show it
(the server is not the bot's, a permission is missing with the channel's overwrites known),
about a second after sending when the service says the channel is unknown or hidden; and a
timeout names the channel, the nonce and the likely causes."""

from __future__ import annotations

import pickle
import queue
import time
from typing import Any

import pytest

from service_client import Channel, ChannelAccessError, Client, Permissions


def _sends(emulator: Any, after: int = 0) -> list[Any]:
    return [e for e in emulator.emits()[after:] if e["event"] == "message:send"]


def test_a_send_the_overwrites_forbid_is_refused_before_anything_is_sent(
        bot: Client, human: Client, world: Any, emulator: Any) -> None:
    general = human.channels.fetch(world.general["publicId"])
    updates: queue.Queue[Any] = queue.Queue()
    bot.on("guild_channels_update", updates.put)
    general.set_overwrite(world.bot["publicId"], type="MEMBER", deny=Permissions.SEND_MESSAGES)
    # The change is announced to the bot; a listing refresh it triggers replaces the cached
    # channel (and forgets its overwrites), so the overwrites are read after it has run.
    assert updates.get(timeout=10)["serverPublicId"] == world.server["publicId"]
    seen = bot.channels.fetch(world.general["publicId"])
    assert [o.target_id for o in seen.overwrites()] == [world.bot["publicId"]]   # now known to the bot
    assert seen.permissions_for(bot.guilds.cache[world.server["publicId"]].me) is not None
    before = len(emulator.emits())
    started = time.monotonic()
    with pytest.raises(ChannelAccessError) as info:
        bot.send_message(world.general["publicId"], "hello?")
    assert time.monotonic() - started < 1.0
    error = info.value
    assert (error.channel_id, error.action, error.reason) == (world.general["publicId"], "send", "missing_permissions")
    assert error.missing == Permissions.SEND_MESSAGES and "SEND_MESSAGES" in str(error)
    assert _sends(emulator, before) == [] and bot._connection.pending_sends() == 0
    back = pickle.loads(pickle.dumps(error))
    assert (back.channel_id, back.reason, str(back)) == (error.channel_id, error.reason, str(error))
    general.delete_overwrite(seen.overwrites()[0])                              # allowed again
    seen.overwrites()
    assert bot.send_message(world.general["publicId"], "hello").content == "hello"


def test_a_send_to_an_unknown_channel_fails_in_about_a_second(bot: Client, world: Any, emulator: Any) -> None:
    started = time.monotonic()
    with pytest.raises(ChannelAccessError) as info:
        bot.send_message("100000000000000042", "anyone?")
    assert time.monotonic() - started < 5                                      # not the 10 s of the echo wait
    assert info.value.reason == "unknown_channel" and "100000000000000042" in str(info.value)
    assert bot._connection.pending_sends() == 0


def test_a_send_to_a_hidden_channel_fails_in_about_a_second(bot: Client, human: Client, world: Any,
                                                            emulator: Any) -> None:
    secret = human.guilds.fetch(world.server["publicId"]).channels.create("staff", private=True)
    started = time.monotonic()
    with pytest.raises(ChannelAccessError) as info:
        bot.send_message(secret.id, "let me in")
    assert time.monotonic() - started < 5
    assert info.value.reason == "missing_permissions" and info.value.missing == Permissions.VIEW_CHANNELS
    assert emulator.messages(secret.id) == []


def test_a_channel_of_a_server_the_bot_is_not_in_is_refused_at_once(bot: Client, world: Any, emulator: Any) -> None:
    stray = Channel(bot, {"publicId": "100000000000000077", "name": "elsewhere", "serverPublicId": "100000000000000099"})
    bot.channels.cache[stray.id] = stray
    before = len(emulator.emits())
    with pytest.raises(ChannelAccessError) as info:
        stray.send("hi")
    assert info.value.reason == "not_a_member" and "100000000000000099" in str(info.value)
    assert _sends(emulator, before) == []


def test_a_send_that_is_allowed_makes_no_extra_request(bot: Client, world: Any, emulator: Any) -> None:
    emulator.clear_requests()
    assert bot.send_message(world.general["publicId"], "quick").content == "quick"
    assert emulator.requests() == []
