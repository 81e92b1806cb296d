"""Tests of the sample bank bot (``samples/bank_bot.py`` and its extension ``samples/cogs/bank.py``).

Written as a bot author writes them, with the fixtures of the pytest plugin: the bot is built by
its own ``build_client``, which loads the extension; the world's clock runs the cog's hourly
task and makes a day pass in milliseconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from bank_bot import build_client

from service_client import Client


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    """Test the sample bot as it is built: its dispatcher and its extensions."""
    return build_client


def test_balance_daily_and_give(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any) -> None:
    carol = bot_world.member
    assert expect_reply(say("general", "!bal")).content == "You have 100 coins."
    assert expect_reply(say("general", "!daily")).content == "+50 coins: you have 150."
    assert expect_reply(say("general", "!daily")).content == (
        "You had your daily coins. Come back in 24 h 0 min.")
    bot_world.advance(23 * 3600 + 30 * 60)
    assert expect_reply(say("general", "!daily")).content.endswith("Come back in 0 h 30 min.")
    bot_world.advance(30 * 60)
    assert expect_reply(say("general", "!daily")).content == "+50 coins: you have 200."
    assert expect_reply(say("general", f"!give {carol.mention} 30")).content == "carol got 30 coins from you."
    assert expect_reply(say("general", f"!bal {carol.mention}")).content == "carol has 130 coins."
    assert expect_reply(say("general", f"!give {carol.mention} 999")).content == "You have only 170 coins."


def test_the_leaderboard_is_posted_every_hour(bot_world: Any, bot_client: Client, say: Any,
                                              expect_reply: Any) -> None:
    expect_reply(say("general", "!daily"))
    reply = expect_reply(say("general", "!leaderboard"))
    assert reply.content == "The leaderboard will be posted here every hour."
    for _ in range(2):  # the first post is due at once, the next one an hour later
        with bot_world.expect_message("general") as board:
            assert bot_world.advance(0 if _ == 0 else 3600) == 1
        assert board.result().content == "Leaderboard: alice: 150"


def test_a_new_member_gets_a_welcome(bot_world: Any, bot_client: Client, expect_dm: Any) -> None:
    bot_world.join("dave")
    assert expect_dm("dave").content == "Welcome! Your account holds 100 coins."


def test_the_bank_is_unloaded_and_reloaded_while_the_bot_runs(
    bot_world: Any, bot_client: Client, say: Any, expect_reply: Any
) -> None:
    assert list(bot_client.extensions) == ["cogs.bank"] and list(bot_client.cogs) == ["Bank"]
    expect_reply(say("general", "!daily"))
    assert expect_reply(say("general", "!reload")).content == "Reloaded cogs.bank."
    assert bot_client.extensions["cogs.bank"] is sys.modules["cogs.bank"]
    # the new code runs, with new balances
    assert expect_reply(say("general", "!bal")).content == "You have 100 coins."
    refused = say("general", "!reload", as_user=bot_world.member)
    assert expect_reply(refused).content == "You need the ADMINISTRATOR permission to use !reload."

    bot_client.unload_extension("cogs.bank")
    assert bot_client.cogs == {} and "cogs.bank" not in sys.modules
    ignored = say("general", "!bal")
    say("general", "!reload")  # the extension is not loaded: the reload says so
    # One channel's messages are handled in order: the bot's first message after !bal answers !reload.
    assert expect_reply(ignored).content == (
        "Reload failed: extension 'cogs.bank' is not loaded; load_extension() it")
