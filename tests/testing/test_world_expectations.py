"""``expect_dm``, ``expect_reaction`` and ``expect_message(since="start")``: what the bot did is
found however soon it came, and an older message or reaction is never taken for a newer one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from service_client import Client, Message
from service_client.pytest_plugin import BotWorld, SeenReaction


@pytest.fixture
def bot_factory(bot_world: BotWorld) -> Callable[..., Client]:
    """A bot that greets #general and DMs carol when it is ready, welcomes newcomers by DM,
    DMs whoever says ``!dm`` and reacts to ``!vote``."""

    def build(**urls: Any) -> Client:
        client = Client(**urls)

        @client.on("ready")
        def hello() -> None:
            client.send_message(bot_world.general.id, "Hello, I am up!")
            client.create_dm(bot_world.member.id).send("hello carol")

        @client.on("guild_member_add")
        def welcome(member: Any) -> None:
            client.create_dm(member.id).send(f"Welcome, {member.user.username}!")

        @client.on("message_create")
        def commands(message: Message) -> None:
            if message.content == "!dm" and message.author is not None:
                client.create_dm(message.author.id).send("you asked for a DM")
            elif message.content == "!vote":
                message.react("👍")
                message.react("👎")

        return client

    return build


def test_what_the_bot_said_when_ready_is_there_since_the_start(bot_world: BotWorld, bot_client: Client,
                                                              expect_message: Any, say: Any,
                                                              expect_reply: Any) -> None:
    hello = expect_message("general", since="start").result()
    assert hello.content == "Hello, I am up!"
    # never taken for the answer to something later: since "now" (the default) it does not count...
    with pytest.raises(AssertionError, match="after expect_message\\(\\) was called"):
        expect_message("general", timeout=0).result()
    # ...nor as a reply, nor twice
    said = say("general", "!nothing")
    with pytest.raises(AssertionError, match="expected a reply from testbot"):
        expect_reply(said, timeout=0)
    with pytest.raises(AssertionError, match="since the world began"):
        expect_message("general", since="start", timeout=0).result()


def test_since_start_needs_the_bots_client(bot_world: BotWorld, expect_message: Any) -> None:
    with pytest.raises(ValueError, match="needs the bot's client.*bot_client fixture"):
        expect_message("general", since="start")
    with pytest.raises(ValueError, match="since must be 'now' or 'start'"):
        expect_message("general", since="yesterday")


def test_since_start_watches_through_the_bot_so_as_user_does_not_apply(bot_world: BotWorld, bot_client: Client,
                                                                       expect_message: Any) -> None:
    with pytest.raises(ValueError, match="leave as_user out"):
        expect_message("general", since="start", as_user="bob")


def test_expect_dm_counts_from_the_last_action(bot_world: BotWorld, bot_client: Client, expect_dm: Any,
                                               say: Any) -> None:
    assert expect_dm("carol").content == "hello carol"                 # no action yet: since the start
    dave = bot_world.join("dave")
    assert expect_dm(dave).content == "Welcome, dave!"
    say("general", "!dm", as_user="carol")
    assert expect_dm("carol").content == "you asked for a DM"
    say("general", "!dm", as_user="bob")                                 # the last action is bob's
    with pytest.raises(AssertionError) as failed:
        expect_dm("carol", timeout=0)
    text = str(failed.value)
    assert text.startswith("expected a DM from testbot to carol after the world's last action, "
                           "say('!dm') as bob, within 0 s\n")
    assert "messages in the DM of carol and testbot (all, oldest first):\n  testbot: 'hello carol'\n" in text
    assert expect_dm("bob").content == "you asked for a DM"


def test_expect_dm_since_a_message_or_the_start(bot_world: BotWorld, bot_client: Client, expect_dm: Any,
                                                say: Any) -> None:
    first = say("general", "!dm", as_user="carol")
    say("general", "!dm", as_user="carol")
    assert expect_dm("carol", since=first).content == "you asked for a DM"
    assert expect_dm("carol", since=first).content == "you asked for a DM"   # the second one
    assert expect_dm("carol", since="start", check=lambda m: m.content.startswith("hello")).content == "hello carol"
    with pytest.raises(AssertionError):
        expect_dm("carol", since="start", timeout=0)                          # all three were taken
    with pytest.raises(ValueError, match="not to itself"):
        expect_dm("testbot")
    with pytest.raises(ValueError, match="since must be 'action', 'start' or a Message"):
        expect_dm("carol", since="now")


def test_expect_dm_without_the_bots_client_watches_through_the_recipient(bot_world: BotWorld,
                                                                         expect_dm: Any) -> None:
    emu = bot_world.emulator
    bot_world.client_for("carol")                                       # carol is online before the DM
    dm = emu.open_dm(bot_world.bot.id, bot_world.member.id)
    emu.post_message(dm["publicId"], bot_world.bot.id, "posted as the bot")
    got = expect_dm("carol")
    assert got.content == "posted as the bot" and got.channel_id == dm["publicId"]


def test_expect_reaction_returns_each_reaction_once(bot_world: BotWorld, bot_client: Client, say: Any,
                                                    expect_reaction: Any) -> None:
    said = say("general", "!vote")
    first = expect_reaction(said)
    assert isinstance(first, SeenReaction)
    assert (first.message_id, first.emoji, first.user_id, first.user_name) == (said.id, "👍", bot_world.bot.id,
                                                                               "testbot")
    assert expect_reaction().emoji == "👎"                             # the last message said, by default
    with pytest.raises(AssertionError) as failed:
        expect_reaction(said, timeout=0)
    assert str(failed.value).startswith(
        "expected a reaction from testbot to '!vote' (alice in #general) within 0 s "
        "(reactions it has now: 👍 by testbot, 👎 by testbot)\n")
    bot_world.react(said, "👍", as_user="bob")
    assert expect_reaction(said, author="bob", emoji="👍").user_name == "bob"
    with pytest.raises(TypeError, match="emoji must be a non-empty str"):
        expect_reaction(said, emoji="")


def test_expect_reaction_after_a_reaction_was_taken_back_and_given_again(bot_world: BotWorld, say: Any,
                                                                         expect_reaction: Any) -> None:
    said = say("general", "again")
    bot_world.react(said, "⭐", as_user="bob")
    assert expect_reaction(said, author="bob").emoji == "⭐"
    bot_world.unreact(said, "⭐", as_user="bob")
    bot_world.react(said, "⭐", as_user="bob")
    assert expect_reaction(said, author="bob").emoji == "⭐"            # a new reaction event


def test_the_world_takes_one_bot_client(bot_world: BotWorld, bot_client: Client) -> None:
    assert bot_world.bot_client is bot_client
    bot_world.attach_bot(bot_client)                                     # the same one again: nothing changes
    other = Client(base_url=bot_world.emulator.base_url, socket_url=bot_world.emulator.socket_url)
    try:
        with pytest.raises(ValueError, match="already has the bot's client"):
            bot_world.attach_bot(other)
    finally:
        other.destroy()
    with pytest.raises(TypeError, match="takes a service_client.Client, got str"):
        bot_world.attach_bot("testbot")  # type: ignore[arg-type]
