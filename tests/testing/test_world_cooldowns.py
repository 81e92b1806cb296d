"""Cooldowns in the test world: they move with ``bot_world.advance``, with no ``clock=`` argument;
and a channel check given by id names the channel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from service_client import BucketType, Client, CommandContext, CommandDispatcher, in_channel
from service_client.pytest_plugin import BotWorld


@pytest.fixture
def bot_factory(bot_world: BotWorld) -> Callable[..., Client]:
    random_id = bot_world.random.id

    def build(**urls: Any) -> Client:
        client = Client(**urls)
        commands = CommandDispatcher(client, prefix="!")

        @commands.command(cooldown=10)
        def roll(ctx: CommandContext) -> None:
            """Roll a die."""
            ctx.reply("4")

        @commands.command(cooldown=86400, cooldown_per=BucketType.MEMBER)
        def daily(ctx: CommandContext) -> None:
            """Collect your daily coins."""
            ctx.reply("100 coins for you.")

        @commands.command()
        @in_channel(random_id)
        def chat(ctx: CommandContext) -> None:
            """Chat in the right place."""
            ctx.reply("Hi!")

        @commands.command()
        @in_channel("123456789012345678")
        def gone(ctx: CommandContext) -> None:
            """Only where no channel is any more."""

        return client

    return build


def test_a_cooldown_moves_with_the_world_s_clock(bot_world: BotWorld, bot_client: Client, say: Any,
                                                 expect_reply: Any) -> None:
    assert expect_reply(say("general", "!roll")).content == "4"
    assert expect_reply(say("general", "!roll")).content == "!roll is on cooldown: try again in 10 s."
    bot_world.advance(11)
    assert expect_reply(say("general", "!roll")).content == "4"


def test_a_daily_cooldown_says_how_long_in_hours_and_minutes(bot_world: BotWorld, bot_client: Client, say: Any,
                                                             expect_reply: Any) -> None:
    assert expect_reply(say("general", "!daily", as_user="carol")).content == "100 coins for you."
    bot_world.advance(48 * 60)
    refused = expect_reply(say("general", "!daily", as_user="carol")).content
    assert refused == "!daily is on cooldown: try again in 23 h 12 min."
    assert expect_reply(say("general", "!daily", as_user="bob")).content == "100 coins for you."  # per member


def test_a_channel_check_given_by_id_shows_the_channel_s_name(bot_world: BotWorld, bot_client: Client, say: Any,
                                                              expect_reply: Any) -> None:
    assert expect_reply(say("general", "!chat")).content == "!chat can only be used in #random."
    assert "!chat: Chat in the right place. (in #random)" in expect_reply(say("general", "!help")).content
    assert expect_reply(say("random", "!chat")).content == "Hi!"

    said = say("general", "!gone")  # an id the bot knows no channel of: its mention, which the service shows by name
    assert expect_reply(said).content == "!gone can only be used in <#123456789012345678>."
