"""Tests of the role bot (``samples/role_bot.py``): ``!role add/remove`` with typed arguments
(a member by mention or name, a role by name with spaces allowed) and reaction roles, driven
through the pytest plugin's world as a bot author would drive them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from role_bot import MENU, build_client

from service_client import Client
from service_client.testing import BotWorld


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    return build_client


@pytest.fixture
def colours(bot_world: BotWorld) -> dict[str, str]:
    """The menu's roles (and one whose name has a space), made on the world's server."""
    made = {name: bot_world.emulator.create_role(bot_world.server.id, name, 0)["role"]["publicId"]
            for name in [*MENU.values(), "Night Owl"]}
    return made


def _roles_of(bot_world: BotWorld, user_name: str) -> set[str]:
    member = bot_world.emulator.member(bot_world.server.id, bot_world.user(user_name).id)
    return {role["name"] for role in member["roles"]}


def test_role_add_and_remove_by_mention_and_name(bot_world: BotWorld, bot_client: Client, colours: Any,
                                                 say: Any, expect_reply: Any) -> None:
    carol = bot_world.user("carol")
    said = say("general", f"!role add {carol.mention} Night Owl")
    assert expect_reply(said).content == "carol now has Night Owl."
    assert "Night Owl" in _roles_of(bot_world, "carol")
    said = say("general", f"!role add {carol.mention} Red")
    assert expect_reply(said).content == "carol now has Red."
    assert {"Night Owl", "Red"} <= _roles_of(bot_world, "carol")            # the first one kept
    said = say("general", f"!role remove {carol.mention} Night Owl")
    assert expect_reply(said).content == "carol no longer has Night Owl."
    assert "Night Owl" not in _roles_of(bot_world, "carol") and "Red" in _roles_of(bot_world, "carol")


def test_role_needs_manage_roles_and_a_known_role(bot_world: BotWorld, bot_client: Client, colours: Any,
                                                  say: Any, expect_reply: Any) -> None:
    carol = bot_world.user("carol")
    said = say("general", f"!role add {carol.mention} Red", as_user="bob")               # a moderator, no MANAGE_ROLES
    assert "MANAGE_ROLES" in expect_reply(said).content
    said = say("general", f"!role add {carol.mention} Purple")
    reply = expect_reply(said).content
    assert "Purple" in reply and "Usage" in reply                              # named, with the usage
    said = say("general", f"!role paint {carol.mention} Red")
    reply = expect_reply(said).content
    assert "paint" in reply and "add" in reply and "remove" in reply
    assert _roles_of(bot_world, "carol") == {"@everyone"}


def test_reacting_to_the_menu_gives_and_takes_the_role(bot_world: BotWorld, bot_client: Client, colours: Any,
                                                       say: Any, expect_message: Any) -> None:
    with expect_message("general") as posted:
        said = say("general", "!rolemenu")
    menu = posted.result()
    assert menu.content.startswith("React to get a role")
    bot_world.react(menu, "🔴", as_user="carol")
    assert "Red" in _roles_of(bot_world, "carol")
    bot_world.react(menu, "🔵", as_user="carol")
    assert {"Red", "Blue"} <= _roles_of(bot_world, "carol")
    bot_world.unreact(menu, "🔴", as_user="carol")
    assert "Red" not in _roles_of(bot_world, "carol") and "Blue" in _roles_of(bot_world, "carol")
    bot_world.react(said, "🔴", as_user="carol")                              # not the menu: nothing
    assert "Red" not in _roles_of(bot_world, "carol")
    assert {r["emoji"] for r in bot_world.emulator.reactions(menu.id) if r["userPublicId"] == bot_world.bot.id} \
        == set(MENU)                                                           # the bot showed the choices
