"""Test a bot against the emulator with the fixtures of service_client's pytest plugin.

Run it with ``python -m pytest test_ping_bot.py`` (``pip install
'service_client[emulator]' pytest``): the plugin is registered when
service_client is installed, so no conftest.py is needed.
"""

import pytest

from service_client import Client, CommandDispatcher, Permissions


def build_bot(**options) -> Client:
    """The bot under test (use your bot's own factory): ``!ping`` and ``!warn``."""
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")

    @commands.command()
    def ping(ctx):
        """Check that the bot is alive."""
        ctx.reply("Pong!")

    @commands.command(requires=Permissions.KICK_MEMBERS)
    def warn(ctx, user_id, *reason):
        """Warn a member (moderators only)."""
        text = " ".join(reason) or "no reason given"
        ctx.send(f"<@{user_id}>, you have been warned: {text}")

    return client


@pytest.fixture
def bot_factory():
    """What the bot_client fixture calls, with base_url= and socket_url=."""
    return build_bot


def test_ping_gets_pong(bot_client, say, expect_reply):
    said = say("general", "!ping")  # alice, the server's owner, posts in #general
    reply = expect_reply(said)  # the bot's next message in #general
    assert reply.content == "Pong!"
    assert reply.reply_to_id == said.id


def test_warn_is_for_moderators(bot_world, bot_client, say, expect_reply):
    carol, bob = bot_world.member, bot_world.moderator
    say("general", f"!warn {carol.id} spam & <b>eggs</b>", as_user=bob)
    assert expect_reply().content == f"{carol.mention}, you have been warned: spam & <b>eggs</b>"
    say("general", f"!warn {bob.id} revenge", as_user=carol)
    assert expect_reply().content == "You need the KICK_MEMBERS permission to use !warn."


def test_unknown_commands_are_ignored(bot_client, say, expect_reply):
    ignored = say("general", "!nope")
    say("general", "!ping")
    assert expect_reply(ignored).content == "Pong!"  # nothing came in between
