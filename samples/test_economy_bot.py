"""Tests of the sample economy bot (``samples/economy_bot.py`` and ``samples/cogs/economy.py``).

Written from the testing guide alone: the bot is built by its own ``build_client`` on a
SQLite file of the test's ``tmp_path``; ``bot_world.restart_bot()`` shows that the balances,
the daily reward and the ``!work`` cooldown survive a restart, and the world's clock makes a
day or an hour pass in milliseconds.
"""

from __future__ import annotations

import functools
import pathlib
from collections.abc import Callable
from typing import Any

import pytest
from economy_bot import build_client

from service_client import Client


@pytest.fixture
def bot_factory(tmp_path: pathlib.Path) -> Callable[..., Client]:
    """The bot as it is built, on a database of this test."""
    return functools.partial(build_client, str(tmp_path / "economy.sqlite"))


@pytest.fixture
def banker(bot_world: Any) -> Any:
    """carol, given the Banker role."""
    role = bot_world.create_role("Banker")
    bot_world.give_role("carol", role)
    return bot_world.member


def test_balances_and_the_daily_reward_survive_a_restart(bot_world: Any, bot_client: Client, say: Any,
                                                         expect_reply: Any) -> None:
    assert expect_reply(say("general", "!bal")).content == "You have 100 coins."
    assert expect_reply(say("general", "!daily")).content == "+50 coins: you have 150."
    bot_world.advance(3600 + 12 * 60)
    bot = bot_world.restart_bot()
    assert bot is not bot_client and bot.clock is bot_world.clock
    assert expect_reply(say("general", "!bal")).content == "You have 150 coins."
    assert expect_reply(say("general", "!daily")).content == (
        "You had your daily coins. Come back in 22 h 48 min.")
    bot_world.advance(22 * 3600 + 48 * 60)
    assert expect_reply(say("general", "!daily")).content == "+50 coins: you have 200."


def test_the_work_cooldown_is_kept_in_the_database(bot_world: Any, bot_client: Client, say: Any,
                                                   expect_reply: Any) -> None:
    assert expect_reply(say("general", "!work")).content == "+10 coins: you have 110."
    bot_world.advance(60)
    bot_world.restart_bot()
    assert expect_reply(say("general", "!work")).content == "!work is on cooldown: try again in 59 min."
    bot_world.advance(59 * 60)
    assert expect_reply(say("general", "!work")).content == "+10 coins: you have 120."


def test_gifts_come_with_a_dm(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any,
                              expect_dm: Any) -> None:
    carol = bot_world.member
    assert expect_reply(say("general", f"!give {carol.mention} 30")).content == "carol got 30 coins from you."
    assert expect_dm("carol").content == "alice gave you 30 coins."
    assert expect_reply(say("general", f"!give {carol.mention} 999")).content == "You have only 70 coins."


def test_only_a_banker_prints_coins(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any,
                                    expect_no_reply: Any) -> None:
    bob = bot_world.moderator
    refused = say("general", f"!grant {bob.mention} 1000", as_user="carol")
    assert expect_reply(refused).content == "You need the Banker role to use !grant."
    expect_no_reply(refused, within=0.2, anywhere=True)  # nothing more: no coins, no DM
    assert expect_reply(say("general", f"!bal {bob.mention}")).content == "bob has 100 coins."
    bot_world.give_role("carol", bot_world.create_role("Banker"))
    granted = say("general", f"!grant {bob.mention} 1000", as_user="carol")
    assert expect_reply(granted).content == "bob has 1100 coins."


def test_the_leaderboard_is_posted_every_hour(bot_world: Any, bot_client: Client, banker: Any, say: Any,
                                              expect_reply: Any) -> None:
    say("general", "!daily")
    expect_reply()
    assert expect_reply(say("general", "!board", as_user=banker)).content == (
        "The leaderboard will be posted here every hour.")
    for seconds in (0, 3600):  # the run due when the bot was ready, then an hour later
        with bot_world.expect_message("general") as board:
            assert bot_world.advance(seconds) == 1
        assert board.result().content == "Leaderboard: alice: 150"


def test_the_shop_sells_by_reaction(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any,
                                    expect_reaction: Any, expect_dm: Any, expect_no_reply: Any) -> None:
    said = say("general", "!shop")
    shop = expect_reply(said)
    assert shop.content.startswith("Shop: react to buy.")
    expect_reaction(shop, emoji="\N{HOT BEVERAGE}")
    expect_reaction(shop, emoji="\N{CROWN}")
    bot_world.react(shop, "\N{HOT BEVERAGE}", as_user="carol")
    assert expect_dm("carol").content == "You bought a coffee for 30 coins. 70 coins left."
    bot_world.react(shop, "\N{CROWN}", as_user="carol")
    assert expect_dm("carol").content == "A crown costs 500 coins; you have 70."
    bot_world.react(said, "\N{HOT BEVERAGE}", as_user="carol")  # not the shop: nothing bought
    expect_no_reply(said, within=0.2, anywhere=True)


def test_a_new_member_gets_a_welcome(bot_world: Any, bot_client: Client, expect_dm: Any) -> None:
    bot_world.join("dave")
    assert expect_dm("dave").content == "Welcome! Your account holds 100 coins."


def test_a_reload_keeps_the_balances(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any) -> None:
    expect_reply(say("general", "!daily"))
    assert expect_reply(say("general", "!reload")).content == "Reloaded cogs.economy."
    assert expect_reply(say("general", "!bal")).content == "You have 150 coins."
    assert bot_client.get_cog("Economy").leaderboard.is_running()
