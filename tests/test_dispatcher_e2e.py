"""CommandDispatcher and Message.member against the emulator, over real sockets.

Humans post through the emulator's control plane; the bot's replies and
``error`` events are collected by listeners registered before each post, so
nothing depends on timing.
"""

from __future__ import annotations

import importlib.util
import logging
import pathlib
import queue
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from service_client import (
    Client,
    CommandContext,
    CommandDispatcher,
    CommandPermissionError,
    CommandSyntaxError,
    Member,
    Message,
    Permissions,
)

#: Seconds to wait for one reply.
REPLY_S = 10.0


class Conversation:
    """The bot's own messages and its ``error`` events, as queues."""

    def __init__(self, bot: Client) -> None:
        self.replies: queue.Queue[Message] = queue.Queue()
        self.errors: queue.Queue[BaseException] = queue.Queue()
        me = bot.user
        assert me is not None
        bot.on("message_create", lambda m: self.replies.put(m) if m.author and m.author.id == me.id else None)
        bot.on("error", self.errors.put)

    def reply(self) -> Message:
        return self.replies.get(timeout=REPLY_S)

    def error(self) -> BaseException:
        return self.errors.get(timeout=REPLY_S)


@pytest.fixture
def conversation(bot: Client) -> Conversation:
    return Conversation(bot)


def _user(emulator: Any, world: Any, name: str, *, permissions: Permissions | None = None) -> str:
    """A new member of the world's server, with a role granting ``permissions`` when given."""
    user_id: str = emulator.create_user(name)["user"]["publicId"]
    server_id = world.server["publicId"]
    role_ids = None
    if permissions is not None:
        role = emulator.create_role(server_id, f"{name}-role", int(permissions))
        role_ids = [role["role"]["publicId"]]
    emulator.add_member(server_id, user_id, role_ids=role_ids)
    return user_id


def test_commands_run_from_chat_with_shell_words_and_generated_help(world, emulator, bot, conversation):
    commands = CommandDispatcher(bot, prefix="!")
    seen: list[tuple[str, ...]] = []
    threads: list[str] = []

    @commands.command(aliases=["say"])
    def echo(ctx: CommandContext, *words: str) -> None:
        """Repeat the words."""
        seen.append(words)
        threads.append(threading.current_thread().name)
        ctx.reply(" | ".join(words))

    channel, human = world.general["publicId"], world.human["publicId"]
    posted = emulator.post_message(channel, human, '!say "hello world" <b>&</b>')["message"]
    reply = conversation.reply()
    assert seen == [("hello world", "<b>&</b>")]  # decoded content, split like a shell line
    assert reply.content == "hello world | <b>&</b>"
    assert reply.reply_to_id == posted["publicId"] and reply.channel_id == channel
    assert threads[0].startswith("service_client-events-")  # the worker pool, not the reader

    emulator.post_message(channel, human, "!help")
    assert conversation.reply().content == (
        "Commands:\n!echo [words...]: Repeat the words. (aliases !say)\n"
        "!help [command]: list the commands, or describe one."
    )
    assert conversation.errors.empty()


def test_a_quoting_error_is_replied_and_emitted(world, emulator, bot, conversation):
    commands = CommandDispatcher(bot)

    @commands.command()
    def echo(ctx: CommandContext, *words: str) -> None:
        ctx.reply(" | ".join(words))

    # An unclosed single quote is an apostrophe: ordinary text.
    emulator.post_message(world.general["publicId"], world.human["publicId"], "!echo 'unclosed it's")
    assert conversation.reply().content == "'unclosed | it's"
    emulator.post_message(world.general["publicId"], world.human["publicId"], '!echo "unclosed')
    error = conversation.error()
    assert isinstance(error, CommandSyntaxError)
    assert error.context is not None and error.context.message.content == '!echo "unclosed'
    assert conversation.reply().content == str(error)
    assert bot.is_connected  # nothing crashed


def test_requires_uses_the_authors_roles_in_that_server(world, emulator, bot, conversation):
    commands = CommandDispatcher(bot)
    warned: list[str] = []

    @commands.command(requires=Permissions.KICK_MEMBERS)
    def warn(ctx: CommandContext, user_id: str) -> None:
        """Warn a member."""
        warned.append(user_id)
        ctx.reply(f"warned {user_id}")

    channel = world.general["publicId"]
    plain = _user(emulator, world, "bob")
    moderator = _user(emulator, world, "carol", permissions=Permissions.KICK_MEMBERS)

    emulator.post_message(channel, plain, "!warn U1")
    error = conversation.error()
    assert isinstance(error, CommandPermissionError) and error.missing == Permissions.KICK_MEMBERS
    assert conversation.reply().content == "You need the KICK_MEMBERS permission to use !warn."

    emulator.post_message(channel, moderator, "!warn U2")
    assert conversation.reply().content == "warned U2"
    emulator.post_message(channel, world.human["publicId"], "!warn U3")  # the owner holds every permission
    assert conversation.reply().content == "warned U3"
    assert warned == ["U2", "U3"]
    assert conversation.errors.empty()


def test_message_member_comes_from_the_cache_or_one_fetch(world, emulator, bot):
    got: queue.Queue[Message] = queue.Queue()
    bot.on("message_create", got.put)
    human = world.human["publicId"]
    server = world.server["publicId"]
    assert bot.members.get(server, human) is None  # only the bot's own member is cached at ready
    emulator.post_message(world.general["publicId"], human, "hello")
    message = got.get(timeout=REPLY_S)
    emulator.clear_requests()

    member = message.member
    assert isinstance(member, Member)
    assert (member.id, member.server_id, member.is_owner) == (human, server, True)
    assert bot.members.get(server, human) is member
    assert message.member is member  # the second read is a cache hit
    fetches = [r for r in emulator.requests() if r["path"] == f"/servers/{server}/members/{human}"]
    assert len(fetches) == 1


def test_message_member_is_none_in_a_dm_and_after_the_author_left(world, emulator, bot):
    got: queue.Queue[Message] = queue.Queue()
    bot.on("message_create", got.put)
    dm = emulator.open_dm(world.human["publicId"], world.bot["publicId"])
    emulator.post_message(dm["publicId"], world.human["publicId"], "hi in private")
    assert got.get(timeout=REPLY_S).member is None

    leaver = _user(emulator, world, "dave")
    emulator.post_message(world.general["publicId"], leaver, "bye")
    message = got.get(timeout=REPLY_S)
    emulator.remove_member(world.server["publicId"], leaver)
    # the member was cached by the join event; the removal event may not have arrived yet
    bot.members.cache.pop((world.server["publicId"], leaver), None)
    assert message.member is None  # fetched: 404, no longer a member


# -- the sample bot -------------------------------------------------------------------------------------

SAMPLE = pathlib.Path(__file__).resolve().parent.parent / "samples" / "ping_bot.py"


@pytest.fixture
def sample_bot(world: Any, emulator: Any) -> Iterator[Client]:
    spec = importlib.util.spec_from_file_location("sample_ping_bot_under_test", SAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    client: Client = module.build_client(base_url=emulator.base_url, socket_url=emulator.socket_url)
    try:
        client.login(world.bot_token, timeout=15)
        yield client
    finally:
        client.destroy()


def test_the_sample_bot_dispatches_files_and_decorated_commands(world, emulator, sample_bot, caplog):
    talk = Conversation(sample_bot)
    channel, owner = world.general["publicId"], world.human["publicId"]

    def say(author: str, text: str) -> str:
        emulator.post_message(channel, author, text)
        return talk.reply().content

    assert say(owner, "!p") == "Pong!"
    assert say(owner, '!echo "two  spaces" and more') == "two  spaces and more"
    assert say(owner, "!echo") == "Usage: !echo <text> [more...]"
    assert say(owner, "!help").splitlines() == [
        "Commands:",
        "!echo <text> [more...]: Repeat the text after the command.",
        "!ping: Check that the bot is alive: it answers Pong! (aliases !p)",
        "!remind <seconds: number> <text> [more...]: Remind you of something in this channel after some seconds.",
        "!warn <user_id> [reason...]: Warn a member of this server (moderators only). (needs KICK_MEMBERS; cooldown 10 s)",
        "!help [command]: list the commands, or describe one.",
    ]
    bob = _user(emulator, world, "bob")
    assert say(bob, f"!warn {owner}") == "You need the KICK_MEMBERS permission to use !warn."
    # The sample logs the refusal in its command_error listener, which runs after the reply is
    # sent: wait for the line (a handler sets an Event) instead of reading the records at once.
    refused = threading.Event()

    class _Refusals(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "command refused: !warn is on cooldown" in record.getMessage():
                refused.set()

    handler = _Refusals()
    logging.getLogger("ping_bot").addHandler(handler)
    try:
        with caplog.at_level("INFO", logger="ping_bot"):
            assert say(owner, f'!warn {bob} "spamming links"') == "bob, you have been warned: spamming links"
            assert say(owner, f"!warn {bob}").startswith("!warn is on cooldown: try again in ")
            assert refused.wait(10), "the sample's command_error listener did not log the refusal"
    finally:
        logging.getLogger("ping_bot").removeHandler(handler)
