"""Typed command arguments against the emulator, through the pytest plugin's world.

The users type in ``#general`` through their own clients (``say``); the bot's answers are read
with ``expect_reply``. The bot's caches start as after login (its own member, no roles, no
channels), so the converters' lookups and their requests run as in a real bot.
"""

from __future__ import annotations

import logging
from typing import Literal

import pytest

from service_client import Channel, CommandContext, CommandDispatcher, Member, Permissions, Role


def test_kick_a_mentioned_member_with_a_reason_that_has_an_apostrophe(bot_world, bot_client, say, expect_reply):
    commands = CommandDispatcher(bot_client, prefix="!")
    seen: list[tuple[Member, str]] = []

    @commands.command(requires=Permissions.KICK_MEMBERS)
    def kick(ctx: CommandContext, member: Member, *, reason: str) -> None:
        """Kick a member out of the server."""
        seen.append((member, reason))
        member.kick()
        ctx.reply(f"{member.display_name} was kicked: {reason}")

    carol, dave = bot_world.member, bot_world.add_user("dave")
    # As typed in a chat window that makes mentions: <@id>.
    said = say("general", f"!kick {dave.mention} he didn't stop", as_user=bot_world.moderator)
    assert expect_reply(said).content == "dave was kicked: he didn't stop"
    # As typed on the emulator's page: @name, found among the users the bot has seen (carol spoke).
    expect_reply(say("general", "!kick @carol", as_user=carol))  # refused (no reason), but carol is seen now
    said = say("general", "!kick @carol she didn't stop", as_user=bot_world.moderator)
    assert expect_reply(said).content == "carol was kicked: she didn't stop"
    assert [(m.id, m.server_id, m.user.username, reason) for m, reason in seen] == [
        (dave.id, bot_world.server.id, "dave", "he didn't stop"),
        (carol.id, bot_world.server.id, "carol", "she didn't stop"),
    ]
    assert all(isinstance(m, Member) for m, _ in seen)
    for user in (dave, carol):
        with pytest.raises(LookupError):
            bot_world.emulator.member(bot_world.server.id, user.id)  # really kicked


def test_a_bad_argument_is_answered_with_the_usage_and_not_logged_as_an_error(
    bot_world, bot_client, say, expect_reply, caplog
):
    commands = CommandDispatcher(bot_client, prefix="!")

    @commands.command()
    def kick(ctx: CommandContext, member: Member, *, reason: str) -> None:
        raise AssertionError("must not run")

    with caplog.at_level(logging.DEBUG, logger="service_client"):
        said = say("general", "!kick nobody it's spam")
        assert expect_reply(said).content == (
            'Bad argument <member>: expected a member of this server (a mention, an id or an exact name), '
            'got "nobody": no member of this server has that name or id. Usage: !kick <member> <reason...>'
        )
        said = say("general", f"!kick {bot_world.member.mention}")
        assert expect_reply(said).content == "Missing <reason...>. Usage: !kick <member> <reason...>"
    bot_side = [r for r in caplog.records if not r.name.startswith("service_client.emulator")]
    assert [r.getMessage() for r in bot_side if r.levelno >= logging.WARNING] == []
    refused = [r for r in caplog.records if r.name == "service_client.dispatcher" and r.levelno == logging.INFO]
    assert len(refused) == 2 and all(r.exc_info is None for r in refused)


def test_channels_roles_and_choices_are_resolved_from_mentions_and_names(bot_world, bot_client, say, expect_reply):
    commands = CommandDispatcher(bot_client, prefix="!")

    @commands.command()
    def tag(ctx: CommandContext, channel: Channel, role: Role, mode: Literal["on", "off"], count: int = 1) -> None:
        """Tag a channel for a role."""
        ctx.reply(f"{channel.name}/{channel.id} {role.name}/{role.id} {mode} {count}")

    random, moderators = bot_world.random, bot_world.moderator_role
    said = say("general", f"!tag <#{random.id}> <@&{moderators.id}> ON 3")
    assert expect_reply(said).content == f"random/{random.id} Moderator/{moderators.id} on 3"
    said = say("general", '!tag #general "Moderator" off')
    assert expect_reply(said).content == f"general/{bot_world.general.id} Moderator/{moderators.id} off 1"
    said = say("general", "!tag #general Moderator sideways")
    assert expect_reply(said).content == (
        'Bad argument <mode: on|off>: expected one of on, off, got "sideways". '
        "Usage: !tag <channel> <role> <mode: on|off> [count: integer]"
    )
    said = say("general", "!help tag")
    assert expect_reply(said).content == "!tag <channel> <role> <mode: on|off> [count: integer]: Tag a channel for a role."
