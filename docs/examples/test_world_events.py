"""Drive every kind of event at a bot with the test world of service_client's pytest plugin.

Run it with ``python -m pytest test_world_events.py`` (``pip install
'service_client[emulator]' pytest``). Each action of ``bot_world`` (``react``, ``join``,
``give_role``...) returns once the bot's listeners of the event it caused have run.
"""

import functools

import pytest

from service_client import Client


def build_bot(*, lobby_id: str, **options) -> Client:
    """A community bot (use your bot's own factory); ``lobby_id`` is the channel it talks in."""
    client = Client(**options)
    greeted: set[str] = set()

    @client.on("ready")
    def hello():
        client.send_message(lobby_id, "Hello, I am up!")

    @client.on("message_create")
    def commands(message):
        if message.author is None or message.author.bot:
            return
        if message.content.startswith("!vote"):
            message.react("👍")
            message.react("👎")
        elif message.content == "!channels":
            names = sorted(c.name for c in message.guild.channels.fetch())
            message.reply(", ".join(names))
        elif message.content == "!help" and message.server_id is None:   # in a DM
            message.reply("Commands: !vote, !channels")

    @client.on("message_reaction_add")
    def starred(info, user, message_id):
        if info["emoji"] == "⭐" and not user.bot:
            client.send_message(lobby_id, f"{user.username} starred a message")

    @client.on("typing_start")
    def first_words(data):
        if data["userPublicId"] not in greeted:
            greeted.add(data["userPublicId"])
            client.send_message(data["channelPublicId"], f"Go ahead, {data['userName']}!")

    @client.on("guild_member_add")
    def welcome(member):
        client.create_dm(member.id).send(f"Welcome, {member.user.username}!")

    @client.on("guild_member_remove")
    def farewell(member):
        client.send_message(lobby_id, f"{member.display_name} {member.reason}")

    @client.on("guild_member_update")
    def promoted(member):
        if not isinstance(member, dict) and "Moderator" in [role.name for role in member.roles.values()]:
            client.send_message(lobby_id, f"{member.display_name} is a moderator now")

    return client


@pytest.fixture
def bot_factory(bot_world):
    """The bot, talking in the world's #general."""
    return functools.partial(build_bot, lobby_id=bot_world.general.id)


def test_the_bot_says_hello_when_ready(bot_client, expect_message):
    # sent before the test body began: ask for every message since the world began
    assert expect_message("general", since="start").result().content == "Hello, I am up!"


def test_votes_get_two_reactions(bot_client, say, expect_reaction):
    said = say("general", "!vote pizza")
    assert expect_reaction(said).emoji == "👍"
    assert expect_reaction(said).emoji == "👎"


def test_a_star_is_announced(bot_world, bot_client, say, expect_message):
    said = say("general", "a fine message", as_user="bob")
    with expect_message("general") as got:
        bot_world.react(said, "⭐", as_user="carol")
    assert got.result().content == "carol starred a message"
    bot_world.unreact(said, "⭐", as_user="carol")       # the bot sees message_reaction_remove


def test_the_first_words_are_encouraged(bot_world, bot_client, expect_message):
    with expect_message("random") as got:
        bot_world.typing("random", as_user="bob")
    assert got.result().content == "Go ahead, bob!"


def test_help_by_dm(bot_world, bot_client, expect_reply):
    said = bot_world.dm("carol", "!help")
    assert expect_reply(said).content == "Commands: !vote, !channels"


def test_newcomers_get_a_welcome_dm(bot_world, bot_client, expect_dm):
    dave = bot_world.join("dave")
    assert expect_dm(dave).content == "Welcome, dave!"


def test_departures_are_announced(bot_world, bot_client, expect_message):
    dave = bot_world.join("dave")
    with expect_message("general") as got:
        bot_world.leave(dave)
    assert got.result().content == "dave left"
    bot_world.join(dave)                                # back: the same user
    with expect_message("general") as got:
        bot_world.kick(dave)
    assert got.result().content == "dave kicked"
    bot_world.join(dave)
    with expect_message("general") as got:
        bot_world.ban(dave, reason="spam")
    assert got.result().content == "dave banned"


def test_promotions_are_announced(bot_world, bot_client, expect_message):
    with expect_message("general") as got:
        bot_world.give_role("carol", "Moderator")
    assert got.result().content == "carol is a moderator now"
    bot_world.take_role("carol", "Moderator")


def test_new_channels_are_listed(bot_world, bot_client, say, expect_reply):
    bot_world.create_channel("news")
    bot_world.create_channel("staff", private=True)     # only the owner sees it, not the bot
    say("general", "!channels")
    assert expect_reply().content == "general, news, random, voice"
