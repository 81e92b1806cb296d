"""Tests of the sample bot (``samples/ping_bot.py``), written as a bot author writes them.

They use only the pytest fixtures that installing service_client provides: ``bot_world`` (a
server on the local emulator with alice the owner, bob a moderator, carol a member and the bot
``testbot``), ``bot_client`` (the bot, logged in, destroyed after the test; made here by the
sample's own ``build_client`` through the ``bot_factory`` fixture) and ``say`` /
``expect_reply``. Run them with ``python -m pytest samples/test_ping_bot.py`` (the project's
default ``python -m pytest`` collects them too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ping_bot import build_client

from service_client import Client


@pytest.fixture
def bot_factory() -> Callable[..., Client]:
    """Test the sample bot as it is built: its command files, its dispatcher and its listeners."""
    return build_client


def test_ping_gets_pong(bot_client: Client, say: Any, expect_reply: Any) -> None:
    said = say("general", "!ping")
    reply = expect_reply(said)
    assert reply.content == "Pong!"
    assert reply.reply_to_id == said.id


def test_echo_returns_the_text_as_typed(bot_client: Client, say: Any, expect_reply: Any) -> None:
    say("general", '!echo "<b>fish & chips</b>" too')
    assert expect_reply().content == "<b>fish & chips</b> too"  # decoded, not &lt;b&gt;


def test_warn_needs_kick_members(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any) -> None:
    carol, bob = bot_world.member, bot_world.moderator
    say("general", f"!warn {carol.id} spam", as_user=bob)
    assert expect_reply().content == f"{carol.mention}, you have been warned: spam"
    say("general", f"!warn {bob.id} revenge", as_user=carol)
    assert expect_reply().content == "You need the KICK_MEMBERS permission to use !warn."


def test_an_unknown_command_is_ignored(bot_client: Client, say: Any, expect_reply: Any) -> None:
    ignored = say("general", "!nope")
    say("general", "!ping")
    # The bot handles one channel's messages in order: had it answered !nope, that answer
    # would be its first message after it.
    assert expect_reply(ignored).content == "Pong!"


def test_remind_answers_at_once_and_reminds_when_the_time_has_passed(
    bot_world: Any, bot_client: Client, say: Any, expect_reply: Any
) -> None:
    carol = bot_world.member
    say("general", "!remind 3600 stretch your legs", as_user=carol)
    assert expect_reply().content == "I will remind you in 3600 s."
    assert bot_world.advance(3599) == 0  # the bot's clock: no real time passes
    with bot_world.expect_message("general") as reminder:
        assert bot_world.advance(1) == 1
    assert reminder.result().content == f"{carol.mention}, reminder: stretch your legs"


def test_remind_refuses_a_bad_delay_or_no_text(bot_world: Any, bot_client: Client, say: Any, expect_reply: Any) -> None:
    say("general", "!remind 0 now")
    assert expect_reply().content == "The delay is a number of seconds from 1 to 86400."
    say("general", "!remind 60")
    assert expect_reply().content == "Missing <text>. Usage: !remind <seconds: number> <text> [more...]"
    assert bot_world.advance(86_400) == 0
