"""Test a bot against the emulator with the fixtures of service_client's pytest plugin.

Run it with ``python -m pytest test_ping_bot.py`` (``pip install
'service_client[emulator]' pytest``): the plugin is registered when
service_client is installed, so no conftest.py is needed.
"""

import queue

import pytest

from service_client import Client, CommandDispatcher, Message


def build_bot(**options) -> Client:
    """The bot under test: ``!ping`` answers ``Pong!`` (use your bot's factory)."""
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")

    @commands.command()
    def ping(ctx):
        """Check that the bot is alive."""
        ctx.reply("Pong!")

    return client


@pytest.fixture
def world(service_emulator):
    """A human (alice) and the bot, both members of a server with a #general channel."""
    alice = service_emulator.create_user("alice")["user"]
    bot = service_emulator.create_user("pingbot", bot=True)
    created = service_emulator.create_server(
        "Test server", alice["publicId"], channels=[{"name": "general", "type": "TEXT"}]
    )
    service_emulator.add_member(created["server"]["publicId"], bot["user"]["publicId"])
    general = next(c for c in created["channels"] if c["name"] == "general")
    return {
        "alice": alice["publicId"],
        "bot_token": bot["token"],
        "general": general["publicId"],
    }


@pytest.fixture
def bot(service_emulator, world):
    """The bot, logged in to the emulator; destroyed after the test."""
    client = build_bot(
        base_url=service_emulator.base_url, socket_url=service_emulator.socket_url
    )
    client.login(world["bot_token"], timeout=30)
    yield client
    client.destroy()


@pytest.fixture
def replies(bot):
    """The bot's own messages as they arrive (registered before anything is posted)."""
    received: queue.Queue[Message] = queue.Queue()

    @bot.on("message_create")
    def collect(message):
        if message.author is not None and message.author.id == bot.user.id:
            received.put(message)

    return received


def test_ping_gets_pong(service_emulator, world, replies):
    posted = service_emulator.post_message(world["general"], world["alice"], "!ping")
    posted = posted["message"]

    reply = replies.get(timeout=10)  # a Message, content decoded

    assert reply.content == "Pong!"
    assert reply.reply_to_id == posted["publicId"]
    assert reply.channel_id == world["general"]


def test_unknown_command_is_answered(service_emulator, world, replies):
    service_emulator.post_message(world["general"], world["alice"], "!nope")

    assert replies.get(timeout=10).content == "Unknown command !nope. Try !help."
