"""Events that carry their context: a reaction event gives the message, its channel and server,
the member and whether it was added or removed; explicit add/remove of the bot's reaction; an
edit of another user's message refused at once; every message has a channel id."""

from __future__ import annotations

import queue
from typing import Any

import pytest

from service_client import ChannelAccessError, Client, Message, Permissions, ReactionEvent
from service_client.testing import BotWorld


def _reactions(client: Client) -> queue.Queue[tuple[str, Any, Any, str]]:
    seen: queue.Queue[tuple[str, Any, Any, str]] = queue.Queue()
    client.on("message_reaction_add", lambda info, user, mid: seen.put(("add", info, user, mid)))
    client.on("message_reaction_remove", lambda info, user, mid: seen.put(("remove", info, user, mid)))
    return seen


def test_a_reaction_event_carries_the_message_channel_server_and_member(bot_world: BotWorld,
                                                                        bot_client: Client) -> None:
    seen = _reactions(bot_client)
    said = bot_world.say("general", "react to me")
    bot_client.members.fetch(bot_world.server.id, bot_world.user("alice").id)   # alice's member cached
    bot_world.react(said, "👍")
    kind, info, user, message_id = seen.get(timeout=10)
    assert kind == "add" and isinstance(info, ReactionEvent) and info.added
    assert dict(info) == {"emoji": "👍", "messagePublicId": said.id, "count": 1}   # the dict it always was
    assert (info.emoji, info.count, info.message_id, message_id) == ("👍", 1, said.id, said.id)
    assert info.channel_id == bot_world.channel("general").id and info.server_id == bot_world.server.id
    assert isinstance(info.message, Message) and info.message.content == "react to me"
    assert info.user is user and info.user_id == bot_world.user("alice").id
    assert info.member is not None and info.member.id == info.user_id
    assert info.guild is bot_client.guilds.cache[bot_world.server.id]
    bot_world.unreact(said, "👍")
    kind, info, _, _ = seen.get(timeout=10)
    assert kind == "remove" and not info.added and info.count == 0 and info.message is not None


def test_a_reaction_on_a_message_the_bot_forgot_gives_ids(bot_world: BotWorld, bot_client: Client) -> None:
    seen = _reactions(bot_client)
    arrived: queue.Queue[Message] = queue.Queue()
    bot_client.on("message_create", arrived.put)
    said = bot_world.say("general", "long ago")
    assert arrived.get(timeout=10).id == said.id                  # the bot has it...
    bot_client._connection.forget_message(said.id)              # ...and forgets it, as after 10,000 newer ones
    bot_world.react(said, "🎉")
    kind, info, _, _ = seen.get(timeout=10)
    assert kind == "add" and info.message_id == said.id and info.message is None
    assert info.channel_id is None and info.server_id is None and info.channel is None and info.member is None


def test_add_and_remove_reaction_say_what_they_want(bot_world: BotWorld, bot_client: Client) -> None:
    seen = _reactions(bot_client)
    said = bot_world.say("general", "vote")
    target = Message(bot_client, bot_world.emulator.messages(bot_world.channel("general").id)[-1])
    before = len(bot_world.emulator.emits())
    target.add_reaction("✅")
    assert seen.get(timeout=10)[0] == "add"                      # the service applied it
    target.add_reaction("✅")                                     # there already: nothing sent
    reacts = [e for e in bot_world.emulator.emits()[before:] if e["event"] == "message:react"]
    assert len(reacts) == 1 and reacts[0]["payload"] == {"messagePublicId": said.id, "emoji": "✅"}
    assert [r["emoji"] for r in bot_world.emulator.reactions(said.id)] == ["✅"]
    target.remove_reaction("✅")
    assert seen.get(timeout=10)[0] == "remove"
    target.remove_reaction("✅")                                  # gone already: nothing sent
    reacts = [e for e in bot_world.emulator.emits()[before:] if e["event"] == "message:react"]
    assert len(reacts) == 2 and bot_world.emulator.reactions(said.id) == []


def test_an_edit_of_another_users_message_is_refused_at_once(bot_world: BotWorld, bot_client: Client) -> None:
    said = bot_world.say("general", "alice wrote this")
    theirs = Message(bot_client, bot_world.emulator.messages(bot_world.channel("general").id)[-1])
    assert theirs.id == said.id
    before = len(bot_world.emulator.emits())
    with pytest.raises(ChannelAccessError) as info:
        theirs.edit("the bot rewrote it")
    assert info.value.reason == "not_the_author" and info.value.action == "edit"
    assert [e for e in bot_world.emulator.emits()[before:] if e["event"] == "message:edit"] == []


def test_a_reaction_the_overwrites_forbid_is_refused_at_once(bot_world: BotWorld, bot_client: Client) -> None:
    general = bot_world.channel("general").id
    bot_world.emulator.set_override(general, bot_world.bot.id, "MEMBER", deny=int(Permissions.ADD_REACTION))
    said = bot_world.say("general", "no reactions for the bot")
    channel = bot_client.channels.fetch(general)
    channel.overwrites()                                          # the bot now knows them
    message = Message(bot_client, bot_world.emulator.messages(general)[-1])
    with pytest.raises(ChannelAccessError) as info:
        message.react("👍")
    assert info.value.missing == Permissions.ADD_REACTION and said.id == message.id
