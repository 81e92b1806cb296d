"""Command checks, hidden commands, ``command_error`` and ``is_command``, through the plugin's fixtures.

The bot below is built as a bot author builds one (``bot_factory``); the world's users speak
and the tests read the bot's replies and the ``command_error`` events it saw. The world's
actions return once the bot's listeners ran, so nothing here waits on timing.
"""

from __future__ import annotations

import pickle
import queue
from collections.abc import Callable
from typing import Any

import pytest

from service_client import (
    CheckFailure,
    Client,
    Command,
    CommandContext,
    CommandDispatcher,
    CommandError,
    CommandInvokeError,
    Message,
    MissingPermissions,
    MissingRole,
    NoPrivateMessage,
    PrivateMessageOnly,
    WrongChannel,
    check,
    dm_only,
    guild_only,
    has_any_role,
    has_permissions,
    has_role,
    in_channel,
)
from service_client.testing import BotWorld


class Bot:
    """What the bot under test did: the commands that ran, the ``command_error`` events, the DMs relayed.

    The events arrive after the reply the dispatcher sends, so a test takes them from a queue.
    """

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.command_errors: queue.Queue[CommandError] = queue.Queue()
        self.relayed: list[str] = []
        self.dispatcher: CommandDispatcher | None = None

    def command_error(self) -> CommandError:
        """The next ``command_error`` the bot heard."""
        return self.command_errors.get(timeout=10)


@pytest.fixture
def bot() -> Bot:
    return Bot()


@pytest.fixture
def bot_factory(bot: Bot) -> Callable[..., Client]:
    def build(**options: Any) -> Client:
        client = Client(**options)

        @client.on("message_create")
        def relay(message: Message) -> None:  # registered before the dispatcher: runs first
            assert bot.dispatcher is not None
            mine = message.author is not None and message.author.bot
            if message.server_id is None and not mine and not bot.dispatcher.is_command(message):
                bot.relayed.append(message.content)

        commands = CommandDispatcher(client, prefix="!")
        bot.dispatcher = commands
        client.on("command_error", bot.command_errors.put)

        @commands.command(hidden=True)
        @guild_only()
        @has_role("Moderator")
        def close(ctx: CommandContext) -> None:
            """Close the ticket."""
            bot.ran.append("close")
            ctx.reply("Closed.")

        @commands.command()
        @has_any_role("Admin", "Moderator")
        def note(ctx: CommandContext, *, text: str) -> None:
            """Leave a note for the staff."""
            bot.ran.append(f"note {text}")
            ctx.reply("Noted.")

        @commands.command(checks=[has_permissions(kick_members=True)])
        def warn(ctx: CommandContext) -> None:
            """Warn somebody."""
            bot.ran.append("warn")
            ctx.reply("Warned.")

        @commands.command()
        @dm_only()
        def remind(ctx: CommandContext, *, text: str) -> None:
            """Remind me, in a DM."""
            bot.ran.append(f"remind {text}")
            ctx.reply("I will remind you.")

        @commands.command()
        @in_channel("#modmail")
        def reply(ctx: CommandContext) -> None:
            """Answer a ticket."""
            bot.ran.append("reply")
            ctx.reply("Sent.")

        @commands.command()
        @check(lambda ctx: ctx.author.username == "alice", message="Only alice may do that.")
        def secret(ctx: CommandContext) -> None:
            """Alice's command."""
            bot.ran.append("secret")
            ctx.reply("Done.")

        @commands.command()
        @check(lambda ctx: 1 // 0 == 0)
        def broken(ctx: CommandContext) -> None:
            """A check with a bug."""
            bot.ran.append("broken")

        return client

    return build


def test_has_role_lets_the_role_in_and_refuses_others_with_the_reason(bot_world: BotWorld, bot_client: Client,
                                                                      bot: Bot, say: Any, expect_reply: Any) -> None:
    assert expect_reply(say("general", "!close", as_user="bob")).content == "Closed."
    said = say("general", "!close", as_user="carol")
    assert expect_reply(said).content == "You need the Moderator role to use !close."
    assert bot.ran == ["close"]
    error = bot.command_error()
    assert isinstance(error, MissingRole) and isinstance(error, CheckFailure)
    assert error.roles == ("Moderator",) and error.command_name == "close"
    assert isinstance(error.context, CommandContext) and error.context.message.id == said.id


def test_has_any_role_takes_names_and_ids(bot_world: BotWorld, bot_client: Client, bot: Bot, say: Any,
                                          expect_reply: Any) -> None:
    assert expect_reply(say("general", "!note ticket 4 is spam", as_user="bob")).content == "Noted."
    said = say("general", "!note hello", as_user="carol")
    assert expect_reply(said).content == "You need one of the roles Admin, Moderator to use !note."
    assert bot.ran == ["note ticket 4 is spam"]

    role_id = bot_world.moderator_role.id
    by_id = Command("byid", lambda ctx: bot.ran.append("byid"), checks=[has_role(role_id)])
    assert bot.dispatcher is not None
    bot.dispatcher.add(by_id)
    say("general", "!byid", as_user="bob")
    said = say("general", "!byid", as_user="carol")
    assert expect_reply(said).content == "You need the Moderator role to use !byid."  # the id shown by name
    assert bot.ran[-1] == "byid"
    assert [type(bot.command_error()) for _ in range(2)] == [MissingRole, MissingRole]


def test_a_role_named_like_a_roles_id_does_not_stand_in_for_it(bot_world: BotWorld, bot_client: Client,
                                                                 bot: Bot, say: Any, expect_reply: Any) -> None:
    role_id = bot_world.moderator_role.id
    assert bot.dispatcher is not None
    bot.dispatcher.add(Command("byid", lambda ctx: bot.ran.append("byid"), checks=[has_role(role_id)]))
    impostor = bot_world.create_role(role_id)  # a role anyone with MANAGE_ROLES could make
    bot_world.give_role("carol", impostor)
    said = say("general", "!byid", as_user="carol")
    assert expect_reply(said).content == "You need the Moderator role to use !byid."
    assert "byid" not in bot.ran and isinstance(bot.command_error(), MissingRole)


def test_a_channel_named_like_a_channels_id_does_not_stand_in_for_it(bot_world: BotWorld, bot_client: Client,
                                                                       bot: Bot, say: Any, expect_reply: Any) -> None:
    modmail = bot_world.create_channel("modmail")
    assert bot.dispatcher is not None
    def here(ctx: CommandContext) -> None:
        bot.ran.append("here")
        ctx.reply("Here.")

    bot.dispatcher.add(Command("here", here, checks=[in_channel(modmail.id)]))
    impostor = bot_world.create_channel(modmail.id)
    said = say(impostor, "!here", as_user="bob")
    assert expect_reply(said).content == "!here can only be used in #modmail."
    assert "here" not in bot.ran and isinstance(bot.command_error(), WrongChannel)
    assert expect_reply(say(modmail, "!here", as_user="bob")).content == "Here."
    assert bot.ran == ["here"]


def test_has_permissions_reads_the_authors_roles(bot_world: BotWorld, bot_client: Client, bot: Bot, say: Any,
                                                 expect_reply: Any) -> None:
    assert expect_reply(say("general", "!warn", as_user="bob")).content == "Warned."
    said = say("general", "!warn", as_user="carol")
    assert expect_reply(said).content == "You need the KICK_MEMBERS permission to use !warn."
    error = bot.command_error()
    assert isinstance(error, MissingPermissions) and error.missing.name == "KICK_MEMBERS"


def test_guild_only_and_dm_only_refuse_the_other_place(bot_world: BotWorld, bot_client: Client, bot: Bot,
                                                       say: Any, expect_reply: Any) -> None:
    said = bot_world.dm("bob", "!close")
    assert expect_reply(said).content == "!close can only be used in a server."
    said = say("general", "!remind stretch", as_user="carol")
    assert expect_reply(said).content == "!remind can only be used in direct messages."
    said = bot_world.dm("carol", "!remind stretch")
    assert expect_reply(said).content == "I will remind you."
    assert [type(bot.command_error()) for _ in range(2)] == [NoPrivateMessage, PrivateMessageOnly]
    assert bot.ran == ["remind stretch"]


def test_in_channel_takes_a_channel_by_name(bot_world: BotWorld, bot_client: Client, bot: Bot, say: Any,
                                            expect_reply: Any) -> None:
    modmail = bot_world.create_channel("modmail")
    said = say("general", "!reply", as_user="bob")
    assert expect_reply(said).content == "!reply can only be used in #modmail."
    assert expect_reply(say(modmail, "!reply", as_user="bob")).content == "Sent."
    error = bot.command_error()
    assert isinstance(error, WrongChannel) and error.channels == ("#modmail",)
    assert bot.ran == ["reply"]


def test_a_predicate_check_refuses_with_its_message_and_a_broken_one_is_a_failure_of_the_bot(
        bot_world: BotWorld, bot_client: Client, bot: Bot, say: Any, expect_reply: Any, listener_errors: Any) -> None:
    assert expect_reply(say("general", "!secret")).content == "Done."  # alice speaks by default
    said = say("general", "!secret", as_user="carol")
    assert expect_reply(said).content == "Only alice may do that."
    assert type(bot.command_error()) is CheckFailure

    errors: queue.Queue[BaseException] = queue.Queue()
    bot_client.on("error", errors.put)
    said = say("general", "!broken", as_user="carol")
    assert expect_reply(said).content == "Sorry, !broken failed: it could not be checked."
    error = bot.command_error()
    assert isinstance(error, CommandInvokeError) and isinstance(error.original, ZeroDivisionError)
    assert errors.get(timeout=10) is error  # the bot failed: "error" hears it too
    assert bot.ran == ["secret"]


def test_a_refusal_goes_to_command_error_not_error_when_command_error_is_listened(
        bot_world: BotWorld, bot_client: Client, bot: Bot, say: Any, expect_reply: Any) -> None:
    errors: queue.Queue[BaseException] = queue.Queue()
    bot_client.on("error", errors.put)
    expect_reply(say("general", "!close", as_user="carol"))
    assert isinstance(bot.command_error(), MissingRole)
    expect_reply(say("general", "!broken", as_user="carol"))  # later in the channel's order
    assert isinstance(bot.command_error(), CommandInvokeError)
    assert isinstance(errors.get(timeout=10), CommandInvokeError)  # the refusal never reached "error"


def test_hidden_commands_stay_out_of_the_help_list_and_are_not_described_by_name(
        bot_world: BotWorld, bot_client: Client, say: Any, expect_reply: Any) -> None:
    listing = expect_reply(say("general", "!help")).content
    assert "!note" in listing and "!close" not in listing
    assert "a role of Admin, Moderator" in listing and "in direct messages only" in listing
    described = expect_reply(say("general", "!help close")).content
    assert described == "Unknown command !close. Try !help."  # as for a command that does not exist


def test_is_command_lets_a_dm_relay_skip_commands_whichever_listener_runs_first(
        bot_world: BotWorld, bot_client: Client, bot: Bot, expect_reply: Any) -> None:
    bot_world.dm("carol", "hello staff")
    expect_reply(bot_world.dm("carol", "!remind tea"))
    expect_reply(bot_world.dm("carol", "!help"))
    bot_world.dm("carol", "!nope")  # no command of this bot: relayed like any text
    expect_reply(bot_world.dm("carol", "!remind cake"))  # the DM channel's later message: the relay ran
    assert bot.relayed == ["hello staff", "!nope"]
    assert bot.ran == ["remind tea", "remind cake"]


def test_checks_are_picklable_and_written_below_the_command_decorator() -> None:
    command = Command("close", print, checks=[has_any_role("Staff"), guild_only(), in_channel("modmail"),
                                              has_permissions("KICK_MEMBERS"), dm_only()])
    copy = pickle.loads(pickle.dumps(command))
    assert [c.description for c in copy.checks] == [c.description for c in command.checks]

    client = Client()
    commands = CommandDispatcher(client)
    try:
        def late(ctx: CommandContext) -> None:
            """Registered, then decorated."""

        commands.command()(late)
        with pytest.raises(TypeError, match="below the command decorator"):
            has_role("Staff")(late)
    finally:
        client.destroy()
    with pytest.raises(ValueError, match="at least one"):
        has_any_role()
    with pytest.raises(TypeError, match="takes True"):
        has_permissions(kick_members=False)
    with pytest.raises(TypeError, match="a role must be a str"):
        has_role(3)  # type: ignore[arg-type]
