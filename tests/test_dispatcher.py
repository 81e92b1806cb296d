"""CommandDispatcher without I/O: parsing, lookup, permissions, cooldowns, help, error reporting.

A fake client and fake messages stand in for the real ones; the end-to-end
behaviour over the emulator is in ``tests/test_dispatcher_e2e.py``.
"""

from __future__ import annotations

import datetime
import pickle
import threading
from typing import Any

import pytest

from service_client import (
    BucketType,
    Collection,
    Command,
    CommandContext,
    CommandCooldownError,
    CommandDispatcher,
    CommandError,
    CommandInvokeError,
    CommandNotFoundError,
    CommandPermissionError,
    CommandSyntaxError,
    CommandUsageError,
    ManualClock,
    MaxConcurrencyReached,
    MissingPermissions,
    NoPrivateMessage,
    Permissions,
)
from service_client.dispatcher.help import duration_text


class FakeUser:
    def __init__(self, uid: str, *, bot: bool = False) -> None:
        self.id = uid
        self.bot = bot


class FakeMember:
    def __init__(self, permissions: Permissions) -> None:
        self.permissions = permissions


class FakeClient:
    """``commands``, ``user``, ``on``/``off`` and ``dispatch`` as the dispatcher uses them.

    ``listeners`` is not callable, so the dispatcher cannot tell who listens: ``errors``
    collects every ``command_error``, ``error_events`` every ``error``.
    """

    def __init__(self) -> None:
        self.commands: Collection[str, Command] = Collection()
        self.user = FakeUser("BOT", bot=True)
        self.listeners: dict[str, list[Any]] = {}
        self.errors: list[BaseException] = []
        self.error_events: list[BaseException] = []
        self.sent: list[tuple[str, Any]] = []

    def on(self, event: str, listener: Any) -> Any:
        self.listeners.setdefault(event, []).append(listener)
        return listener

    def off(self, event: str, listener: Any) -> None:
        self.listeners[event].remove(listener)

    def dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        assert event in ("command_error", "error") and key == "C1"
        (self.errors if event == "command_error" else self.error_events).append(args[0])

    def send_message(self, channel_id: str, options: Any = None, **kwargs: Any) -> Any:
        self.sent.append((channel_id, options))
        return None

    def deliver(self, message: FakeMessage) -> None:
        for listener in list(self.listeners.get("message_create", [])):
            listener(message)


class FakeMessage:
    def __init__(
        self,
        content: str,
        *,
        author: FakeUser | None = None,
        server_id: str | None = "S1",
        member: FakeMember | BaseException | None = None,
        fail_reply: bool = False,
    ) -> None:
        self.content = content
        self.author = author if author is not None else FakeUser("U1")
        self.server_id = server_id
        self.channel_id = "C1"
        self._member = member if member is not None else FakeMember(Permissions(0))
        self.member_reads = 0
        self.replies: list[str] = []
        self.fail_reply = fail_reply

    @property
    def member(self) -> FakeMember | None:
        self.member_reads += 1
        if isinstance(self._member, BaseException):
            raise self._member
        return self._member if self.server_id is not None else None

    def reply(self, options: Any = None, **kwargs: Any) -> None:
        if self.fail_reply:
            raise RuntimeError("socket closed")
        self.replies.append(options)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def client() -> FakeClient:
    return FakeClient()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def bot(client: FakeClient, clock: Clock) -> CommandDispatcher:
    return CommandDispatcher(client, prefix="!", clock=clock)  # type: ignore[arg-type]


def run(client: FakeClient, content: str, **kwargs: Any) -> FakeMessage:
    message = FakeMessage(content, **kwargs)
    client.deliver(message)
    return message


# -- parsing and lookup ---------------------------------------------------------------------------


def test_words_are_split_like_a_shell_and_passed_after_the_context(client, bot):
    seen: list[tuple[Any, ...]] = []

    @bot.command()
    def echo(ctx: CommandContext, *words: str) -> None:
        """Repeat the words."""
        seen.append((ctx.command.name if ctx.command else None, ctx.invoked_with, ctx.prefix, words, ctx.args))
        ctx.reply(" | ".join(words))

    message = run(client, """!echo "hello world" it\\'s 'a b' plain""")
    assert seen == [("echo", "echo", "!", ("hello world", "it's", "a b", "plain"),
                     ["hello world", "it's", "a b", "plain"])]
    assert message.replies == ["hello world | it's | a b | plain"]
    assert client.errors == []
    assert client.commands["echo"].execute is echo  # the decorator registers in client.commands


def test_an_unbalanced_quote_is_reported_not_raised(client, bot):
    @bot.command()
    def echo(ctx: CommandContext, *words: str) -> None:
        raise AssertionError("must not run")

    message = run(client, '!echo "no closing quote')
    (error,) = client.errors
    assert isinstance(error, CommandSyntaxError)
    assert message.replies == [str(error)]
    assert "No closing quotation" in str(error) and "!echo" in str(error)
    assert error.context is not None and error.context.message is message


@pytest.mark.parametrize("content", ["hello", "!", "! echo", "", "?echo", " !echo"])
def test_messages_without_a_command_are_ignored(client, bot, content):
    calls: list[str] = []
    bot.add(Command("echo", lambda ctx, *a: calls.append("ran")))
    message = FakeMessage(content)
    assert bot.process(message) is False  # type: ignore[arg-type]
    assert calls == [] and message.replies == [] and client.errors == []


def test_own_messages_and_other_bots_are_ignored_unless_asked(client, clock):
    calls: list[str] = []
    strict = CommandDispatcher(client, clock=clock)  # type: ignore[arg-type]
    strict.add(Command("ping", lambda ctx: calls.append(ctx.message.author.id)))
    run(client, "!ping", author=FakeUser("BOT", bot=True))
    run(client, "!ping", author=FakeUser("OTHERBOT", bot=True))
    assert calls == []
    strict.close()
    lenient = CommandDispatcher(client, ignore_bots=False, clock=clock)  # type: ignore[arg-type]
    run(client, "!ping", author=FakeUser("BOT", bot=True))
    run(client, "!ping", author=FakeUser("OTHERBOT", bot=True))
    assert calls == ["OTHERBOT"]
    lenient.close()


def test_names_and_aliases_match_ignoring_case_unless_asked(client, clock):
    calls: list[str] = []
    bot = CommandDispatcher(client, clock=clock)  # type: ignore[arg-type]
    bot.add(Command("Ping", lambda ctx: calls.append(ctx.invoked_with), aliases=("p",)))
    for text in ("!ping", "!PING", "!P", "!p"):
        run(client, text)
    assert calls == ["ping", "PING", "P", "p"]
    bot.close()
    exact = CommandDispatcher(client, case_insensitive=False, clock=clock)  # type: ignore[arg-type]
    message = run(client, "!ping")
    assert message.replies == [] and client.errors == []  # no such command: left alone
    run(client, "!Ping")
    assert calls[-1] == "Ping"
    exact.close()


def test_an_unknown_command_is_silent_by_default(client, bot, caplog):
    with caplog.at_level("DEBUG", logger="service_client.dispatcher"):
        message = run(client, "!nope a b")
    assert message.replies == [] and client.errors == []   # another bot may own !nope
    assert bot.process(FakeMessage("!nope")) is False
    assert any("no command 'nope'" in r.getMessage() for r in caplog.records)


def test_reply_unknown_answers_with_a_hint_but_emits_no_error(client, clock):
    CommandDispatcher(client, reply_unknown=True, clock=clock)  # type: ignore[arg-type]
    message = run(client, "!nope a b")
    assert message.replies == ["Unknown command !nope. Try !help."]
    assert client.errors == []


def test_reply_unknown_must_be_a_bool(client):
    with pytest.raises(TypeError, match="reply_unknown"):
        CommandDispatcher(client, reply_unknown="yes")  # type: ignore[arg-type]


def test_several_prefixes_longest_first(client, clock):
    calls: list[str] = []
    bot = CommandDispatcher(client, prefix=["!", "!!", "bot:"], clock=clock)  # type: ignore[arg-type]
    bot.add(Command("ping", lambda ctx: calls.append(ctx.prefix)))
    run(client, "!ping")
    run(client, "!!ping")
    run(client, "bot:ping")
    assert calls == ["!", "!!", "bot:"]
    assert bot.prefix == "!" and bot.prefixes == ("bot:", "!!", "!")


@pytest.mark.parametrize(
    ("prefix", "error"),
    [("", ValueError), ("a b", ValueError), (" !", ValueError), ([], ValueError), (5, TypeError),
     ([b"!"], TypeError), (b"!", TypeError)],
)
def test_bad_prefixes_are_refused_at_construction(client, prefix, error):
    with pytest.raises(error, match="prefix"):
        CommandDispatcher(client, prefix=prefix)  # type: ignore[arg-type]
    assert client.listeners == {}


def test_close_stops_listening(client, bot):
    calls: list[int] = []
    bot.add(Command("ping", lambda ctx: calls.append(1)))
    run(client, "!ping")
    bot.close()
    bot.close()  # idempotent
    run(client, "!ping")
    assert calls == [1]


def test_listen_false_leaves_dispatch_to_process(client, clock):
    bot = CommandDispatcher(client, listen=False, clock=clock)  # type: ignore[arg-type]
    assert client.listeners == {}
    calls: list[int] = []
    bot.add(Command("ping", lambda ctx: calls.append(1)))
    assert bot.process(FakeMessage("!ping")) is True  # type: ignore[arg-type]
    assert calls == [1]


# -- registration ---------------------------------------------------------------------------------


def test_decorator_defaults_and_explicit_fields(client, bot):
    @bot.command()
    def ping(ctx: CommandContext) -> None:
        """Check the bot.

        More text that is not the description.
        """

    @bot.command("ban", aliases=["b"], description="Ban someone", requires="ban_members", cooldown=2)
    def ban_handler(ctx: CommandContext, user_id: str) -> None:
        pass

    assert client.commands["ping"].description == "Check the bot."
    ban = client.commands["ban"]
    assert (ban.execute, ban.aliases, ban.description, ban.requires, ban.cooldown) == (
        ban_handler, ("b",), "Ban someone", Permissions.BAN_MEMBERS, 2.0)


def test_a_name_or_alias_clash_is_refused(client, bot):
    bot.add(Command("ping", print, aliases=("p",)))
    for clash in (Command("ping", print), Command("PING", print), Command("pong", print, aliases=["P"]),
                  Command("p", print)):
        with pytest.raises(ValueError, match="already used by command 'ping'"):
            bot.add(clash)
    same = client.commands["ping"]
    assert bot.add(same) is same  # adding the registered object again is a no-op
    with pytest.raises(TypeError):
        bot.add({"name": "x", "execute": print})  # type: ignore[arg-type]


def test_commands_loaded_as_records_are_dispatched(client, bot):
    calls: list[tuple[str, ...]] = []
    client.commands["roll"] = Command.from_object(
        {"name": "roll", "execute": lambda ctx, sides="6": calls.append((sides,)), "aliases": ["r"]}
    )  # type: ignore[assignment]
    run(client, "!roll 20")
    run(client, "!r")
    assert calls == [("20",), ("6",)]


# -- arguments ---------------------------------------------------------------------------------------


def test_arguments_that_do_not_fit_get_the_usage_line(client, bot):
    calls: list[tuple[str, ...]] = []

    @bot.command()
    def warn(ctx: CommandContext, user_id: str, *reason: str) -> None:
        calls.append((user_id, *reason))

    @bot.command()
    def pair(ctx: CommandContext, first: str, second: str = "b") -> None:
        calls.append((first, second))

    message = run(client, "!warn")
    (error,) = client.errors
    assert isinstance(error, CommandUsageError)
    assert error.usage == "!warn <user_id> [reason...]"
    assert message.replies == ["Usage: !warn <user_id> [reason...]"]
    run(client, "!pair x y z")
    assert client.errors[-1].usage == "!pair <first> [second]"
    run(client, "!warn U9 too many words")
    run(client, "!pair x")
    assert calls == [("U9", "too", "many", "words"), ("x", "b")]


def test_a_type_error_raised_inside_the_command_is_an_invoke_error_not_a_usage_error(client, bot):
    @bot.command()
    def boom(ctx: CommandContext) -> None:
        raise TypeError("inside")

    message = run(client, "!boom")
    (error,) = client.errors
    assert isinstance(error, CommandInvokeError)
    assert isinstance(error.original, TypeError) and error.__cause__ is error.original
    assert message.replies == ["Sorry, !boom failed because of an internal error."]
    assert "inside" not in message.replies[0]  # internals stay out of the chat


def test_a_command_error_raised_by_the_command_is_its_refusal_shown_as_written(client, bot, caplog):
    @bot.command()
    def purge(ctx: CommandContext, count: int) -> None:
        if count > 100:
            raise CommandError("count must be at most 100.")

    with caplog.at_level("INFO", logger="service_client.dispatcher"):
        message = run(client, "!purge 500")
    (error,) = client.errors
    assert type(error) is CommandError
    assert error.command_name == "purge" and error.context is not None and error.context.message is message
    assert message.replies == ["count must be at most 100."]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]  # a refusal, not a failure of the bot


def test_a_command_that_raises_is_logged_with_its_traceback(client, bot, caplog):
    @bot.command()
    def boom(ctx: CommandContext) -> None:
        raise RuntimeError("kaput")

    with caplog.at_level("ERROR", logger="service_client.dispatcher"):
        run(client, "!boom")
    (record,) = [r for r in caplog.records if r.name == "service_client.dispatcher"]
    assert record.exc_info is not None and "kaput" in str(record.exc_info[1])


# -- permissions ---------------------------------------------------------------------------------------


def test_requires_is_checked_against_the_authors_member_permissions(client, bot):
    calls: list[str] = []
    bot.add(Command("kick", lambda ctx, uid: calls.append(uid), requires=Permissions.KICK_MEMBERS))

    denied = run(client, "!kick U2", member=FakeMember(Permissions.SEND_MESSAGES | Permissions.BAN_MEMBERS))
    (error,) = client.errors
    assert isinstance(error, CommandPermissionError) and error.missing == Permissions.KICK_MEMBERS
    assert denied.replies == ["You need the KICK_MEMBERS permission to use !kick."]
    assert calls == []

    allowed = run(client, "!kick U2", member=FakeMember(Permissions.KICK_MEMBERS | Permissions.SEND_MESSAGES))
    assert calls == ["U2"] and allowed.replies == []
    run(client, "!kick U3", member=FakeMember(Permissions.ALL))
    assert calls == ["U2", "U3"]


def test_several_required_permissions_name_each_missing_one(client, bot):
    bot.add(Command("purge", lambda ctx: None, requires=["MANAGE_MESSAGES", Permissions.KICK_MEMBERS]))
    message = run(client, "!purge", member=FakeMember(Permissions.KICK_MEMBERS))
    assert client.errors[-1].missing == Permissions.MANAGE_MESSAGES
    message = run(client, "!purge", member=FakeMember(Permissions(0)))
    assert message.replies == ["You need the KICK_MEMBERS and MANAGE_MESSAGES permission to use !purge."]


def test_a_command_with_requires_is_refused_in_a_dm(client, bot):
    calls: list[int] = []
    bot.add(Command("kick", lambda ctx: calls.append(1), requires=Permissions.KICK_MEMBERS))
    message = run(client, "!kick", server_id=None)
    assert isinstance(client.errors[-1], NoPrivateMessage)
    assert message.replies == ["!kick can only be used in a server."]
    assert message.member_reads == 0 and calls == []


def test_commands_without_requires_never_read_the_member(client, bot):
    bot.add(Command("ping", lambda ctx: None))
    message = run(client, "!ping")
    assert message.member_reads == 0  # no REST fetch for commands anybody may run


def test_permissions_that_cannot_be_read_are_an_invoke_error(client, bot):
    from service_client import ServiceAPIError

    bot.add(Command("kick", lambda ctx: None, requires=Permissions.KICK_MEMBERS))
    failure = ServiceAPIError(500, "/servers/S1/members/U1", '{"error": "boom"}')
    message = run(client, "!kick", member=failure)
    (error,) = client.errors
    assert isinstance(error, CommandInvokeError) and error.original is failure
    assert message.replies == ["Sorry, !kick failed: your permissions could not be checked."]


def test_a_missing_member_holds_no_permission(client, bot):
    bot.add(Command("kick", lambda ctx: None, requires=Permissions.KICK_MEMBERS))
    message = FakeMessage("!kick")
    message._member = None  # type: ignore[assignment]  # e.g. the author left the server
    client.deliver(message)
    assert isinstance(client.errors[-1], CommandPermissionError)


# -- cooldowns ----------------------------------------------------------------------------------------


def test_cooldown_is_per_user_and_per_command(client, bot, clock):
    calls: list[str] = []
    bot.add(Command("roll", lambda ctx: calls.append(ctx.message.author.id), cooldown=5))
    bot.add(Command("ping", lambda ctx: calls.append("ping")))
    alice, bob = FakeUser("ALICE"), FakeUser("BOB")

    run(client, "!roll", author=alice)
    clock.now += 2
    refused = run(client, "!roll", author=alice)
    (error,) = client.errors
    assert isinstance(error, CommandCooldownError) and error.retry_after == pytest.approx(3.0)
    assert refused.replies == ["!roll is on cooldown: try again in 3.0 s."]
    run(client, "!roll", author=bob)  # another user is not held up
    run(client, "!ping", author=alice)  # nor another command
    clock.now += 3
    run(client, "!roll", author=alice)
    assert calls == ["ALICE", "BOB", "ping", "ALICE"]


def test_a_refused_invocation_does_not_start_the_cooldown(client, bot, clock):
    calls: list[str] = []
    bot.add(Command("warn", lambda ctx, uid: calls.append(uid), cooldown=60,
                    requires=Permissions.KICK_MEMBERS))
    mod = FakeMember(Permissions.KICK_MEMBERS)
    run(client, "!warn", member=mod)  # usage error
    run(client, "!warn U2", member=FakeMember(Permissions(0)))  # permission error
    run(client, "!warn U3", member=mod)
    assert calls == ["U3"]
    assert [type(e) for e in client.errors] == [CommandUsageError, MissingPermissions]


def test_cooldown_check_and_take_is_atomic_across_threads(client, bot):
    ran: list[int] = []
    lock = threading.Lock()

    def roll(ctx: CommandContext) -> None:
        with lock:
            ran.append(1)

    bot.add(Command("roll", roll, cooldown=1000))
    start = threading.Barrier(8)

    def worker() -> None:
        start.wait(10)
        bot.process(FakeMessage("!roll", author=FakeUser("SAME")))  # type: ignore[arg-type]

    threads = [threading.Thread(target=worker, name=f"test-cooldown-{i}") for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(ran) == 1
    assert len(client.errors) == 7 and all(isinstance(e, CommandCooldownError) for e in client.errors)


# -- help --------------------------------------------------------------------------------------------


def test_generated_help_lists_and_describes_commands(client, bot):
    @bot.command(aliases=["p"])
    def ping(ctx: CommandContext) -> None:
        """Check that the bot is alive."""

    @bot.command(requires=Permissions.KICK_MEMBERS, cooldown=30)
    def warn(ctx: CommandContext, user_id: str, *reason: str) -> None:
        """Warn a member."""

    listing = run(client, "!help").replies
    assert listing == ["\n".join([
        "Commands:",
        "!ping: Check that the bot is alive. (aliases !p)",
        "!warn <user_id> [reason...]: Warn a member. (needs KICK_MEMBERS; cooldown 30 s)",
        "!help [command]: list the commands, or describe one.",
    ])]
    assert run(client, "!help warn").replies == [
        "!warn <user_id> [reason...]: Warn a member. (needs KICK_MEMBERS; cooldown 30 s)"]
    assert run(client, "!HELP !p").replies == ["!ping: Check that the bot is alive. (aliases !p)"]
    assert run(client, "!help nope").replies == ["Unknown command !nope. Try !help."]
    assert client.errors == []


def test_a_registered_help_command_replaces_the_generated_one(client, bot):
    bot.add(Command("help", lambda ctx: ctx.reply("my help")))
    assert run(client, "!help").replies == ["my help"]
    assert "!help [command]" not in bot.help_text()


def test_help_can_be_turned_off(client, clock):
    bot = CommandDispatcher(client, help_command=False, clock=clock)  # type: ignore[arg-type]
    assert run(client, "!help").replies == [] and client.errors == []
    bot.close()
    CommandDispatcher(client, help_command=False, reply_unknown=True, clock=clock)  # type: ignore[arg-type]
    assert run(client, "!help").replies == ["Unknown command !help."]


# -- reporting -------------------------------------------------------------------------------------


def test_reply_errors_false_only_emits(client, clock):
    CommandDispatcher(client, reply_errors=False, clock=clock)  # type: ignore[arg-type]
    message = run(client, '!help "unclosed')
    assert message.replies == [] and isinstance(client.errors[-1], CommandSyntaxError)


def test_a_failed_error_reply_still_emits_the_error(client, bot, caplog):
    with caplog.at_level("WARNING", logger="service_client.dispatcher"):
        run(client, '!help "unclosed', fail_reply=True)
    assert isinstance(client.errors[-1], CommandSyntaxError)
    assert any("could not report" in r.getMessage() for r in caplog.records)


def test_command_errors_pickle_without_their_context(client, bot):
    bot.add(Command("roll", lambda ctx: None, cooldown=5, requires=Permissions.KICK_MEMBERS))
    run(client, "!roll", member=FakeMember(Permissions(0)))
    run(client, '!roll "unclosed')
    assert len(client.errors) == 2
    for error in client.errors:
        assert error.context is not None
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.context is None
        assert {k: v for k, v in vars(copy).items() if k != "context"} == {
            k: v for k, v in vars(error).items() if k != "context"}
    assert pickle.loads(pickle.dumps(client.errors[0])).missing == Permissions.KICK_MEMBERS
    assert isinstance(client.errors[0], CommandError)
    unknown = pickle.loads(pickle.dumps(CommandNotFoundError("Unknown command !nope.", name="nope")))
    assert unknown.name == "nope" and str(unknown) == "Unknown command !nope."


def test_context_send_posts_to_the_channel(client, bot):
    bot.add(Command("say", lambda ctx, *words: ctx.send(" ".join(words))))
    run(client, "!say hi there")
    assert client.sent == [("C1", "hi there")]


# -- Command fields --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"requires": "NOT_A_PERMISSION"}, ValueError), ({"requires": -1}, ValueError),
     ({"requires": 1.5}, TypeError), ({"requires": [object()]}, TypeError), ({"requires": True}, TypeError),
     ({"cooldown": -1}, ValueError), ({"cooldown": float("nan")}, ValueError),
     ({"cooldown": float("inf")}, ValueError), ({"cooldown": "5"}, TypeError), ({"cooldown": True}, TypeError)],
)
def test_command_rejects_bad_requires_and_cooldown(kwargs, error):
    with pytest.raises(error):
        Command("x", print, **kwargs)


def test_command_requires_and_cooldown_defaults_pickle_and_repr():
    plain = Command("x", print)
    assert plain.requires == Permissions(0) and plain.cooldown == 0.0
    cmd = Command("kick", print, requires=("kick_members", Permissions.BAN_MEMBERS), cooldown=2)
    assert cmd.requires == Permissions.KICK_MEMBERS | Permissions.BAN_MEMBERS and cmd.cooldown == 2.0
    copy = pickle.loads(pickle.dumps(cmd))
    assert (copy.requires, copy.cooldown) == (cmd.requires, cmd.cooldown)
    assert "cooldown=2.0" in repr(cmd) and "requires=" in repr(cmd) and "cooldown" not in repr(plain)


def test_context_repr_shows_attributes_under_their_names(client, bot):
    seen: list[str] = []
    bot.add(Command("say", lambda ctx, *words: seen.append(repr(ctx))))
    run(client, "!say hi there")
    (text,) = seen
    assert text.startswith("<CommandContext invoked_with='say' args=['hi', 'there'] author=")
    assert text.endswith("channel_id='C1'>")


# -- the bare decorator ----------------------------------------------------------------------------


def test_the_bare_decorator_registers_the_command_and_keeps_the_function(client, bot):
    @bot.command
    def ping(ctx: CommandContext) -> None:
        """Check that the bot is alive."""
        ctx.reply("Pong!")

    assert callable(ping) and ping.__name__ == "ping"           # the function, not a decorator
    assert bot.commands["ping"].execute is ping
    assert run(client, "!ping").replies == ["Pong!"]
    assert "!ping: Check that the bot is alive." in bot.help_text()

    @bot.command()
    def pong(ctx: CommandContext) -> None:
        ctx.reply("Ping!")

    assert run(client, "!pong").replies == ["Ping!"]


def test_usage_takes_a_command_or_its_name_and_refuses_anything_else(client, bot):
    @bot.command(aliases=["w"])
    def warn(ctx: CommandContext, user_id: str, *reason: str) -> None:
        """Warn a member."""

    assert bot.usage("warn") == bot.usage("!w") == bot.usage(bot.commands["warn"]) == "!warn <user_id> [reason...]"
    with pytest.raises(LookupError, match=r"no command 'nope'; known: warn"):
        bot.usage("nope")
    with pytest.raises(TypeError, match="command must be a Command or a command name, got int"):
        bot.usage(3)


def test_the_listing_shows_each_commands_cooldown_as_its_docstring_says(client, bot):
    @bot.command(cooldown=2.5)
    def slow(ctx: CommandContext) -> None:
        """Slow down."""

    assert "cooldown" in CommandDispatcher.help_text.__doc__
    assert bot.help_text().splitlines()[1] == "!slow: Slow down. (cooldown 2.5 s)"


# -- cooldowns on the client's clock, buckets, words, a store, max_concurrency -----------------------

T0 = datetime.datetime(2030, 1, 1, 12, 0, tzinfo=datetime.timezone.utc)


class ClockedClient(FakeClient):
    """A fake client with a clock, as a real one has (``client.clock``)."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock(start=50.0, utc=T0)

    def dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        super().dispatch(event, *args, key="C1")  # these tests use other channels too


def test_a_cooldown_is_timed_by_the_client_s_clock_by_default() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type] # no clock=
    calls: list[str] = []
    bot.add(Command("roll", lambda ctx: calls.append("roll"), cooldown=10))
    run(client, "!roll")
    client.clock.advance(9)
    assert run(client, "!roll").replies == ["!roll is on cooldown: try again in 1.0 s."]
    client.clock.advance(2)
    run(client, "!roll")
    assert calls == ["roll", "roll"]


def test_cooldown_buckets_per_user_member_channel_server_or_everyone() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type]
    ran: list[str] = []
    for per in ("user", BucketType.MEMBER, "CHANNEL", BucketType.SERVER, BucketType.DEFAULT):
        name = f"c{BucketType.resolve(per).value}"
        bot.add(Command(name, lambda ctx, n=name: ran.append(n), cooldown=60, cooldown_per=per))
    alice, bob = FakeUser("ALICE"), FakeUser("BOB")

    def attempt(name: str, author: FakeUser, server: str | None, channel: str) -> bool:
        message = FakeMessage(f"!{name}", author=author, server_id=server)
        message.channel_id = channel
        before = len(ran)
        bot.process(message)  # type: ignore[arg-type]
        return len(ran) > before

    places = [(alice, "S1", "C1"), (alice, "S2", "C2"), (bob, "S1", "C1"), (bob, "S1", "C3")]
    assert [attempt("cuser", *p) for p in places] == [True, False, True, False]
    assert [attempt("cmember", *p) for p in places] == [True, True, True, False]
    assert [attempt("cchannel", *p) for p in places] == [True, True, False, True]
    assert [attempt("cserver", *p) for p in places] == [True, True, False, False]
    assert [attempt("cdefault", *p) for p in places] == [True, False, False, False]
    assert attempt("cserver", alice, None, "DM1") and not attempt("cserver", alice, None, "DM1")  # a DM: per user
    assert BucketType.GUILD is BucketType.SERVER and BucketType.resolve("guild") is BucketType.SERVER
    with pytest.raises(ValueError, match="cooldown_per must be one of default, user, member, channel, server"):
        Command("x", print, cooldown=1, cooldown_per="team")
    with pytest.raises(TypeError, match="concurrency_per must be a BucketType"):
        Command("x", print, max_concurrency=1, concurrency_per=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_concurrency must be at least 1"):
        Command("x", print, max_concurrency=0)
    with pytest.raises(TypeError, match="max_concurrency must be an int"):
        Command("x", print, max_concurrency=1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(0.04, "0.1 s"), (3.0, "3.0 s"), (9.81, "9.9 s"), (10, "10 s"), (42.2, "43 s"), (60, "1 min"),
     (725, "12 min 5 s"), (3600, "1 h"), (3601, "1 h 1 min"), (83520, "23 h 12 min"), (86399.5, "1 d"),
     (86400, "1 d"), (2 * 86400 + 3 * 3600, "2 d 3 h"), (2 * 86400 + 1, "2 d 1 h")],
)
def test_a_wait_is_stated_in_words_never_shorter_than_it_is(seconds: float, words: str) -> None:
    assert duration_text(seconds) == words


def test_a_long_cooldown_says_hours_and_minutes() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type]
    bot.add(Command("daily", lambda ctx: None, cooldown=86400, cooldown_per="member"))
    run(client, "!daily")
    client.clock.advance(48 * 60)
    refused = run(client, "!daily")
    assert refused.replies == ["!daily is on cooldown: try again in 23 h 12 min."]
    error = client.errors[-1]
    assert isinstance(error, CommandCooldownError) and error.per is BucketType.MEMBER
    assert error.retry_after == pytest.approx(83520.0)
    assert pickle.loads(pickle.dumps(error)).per is BucketType.MEMBER


class DictStore:
    """A cooldown store in a dict (a database in a real bot)."""

    def __init__(self) -> None:
        self.data: dict[str, datetime.datetime] = {}
        self.fail = False

    def get(self, key: str) -> datetime.datetime | None:
        if self.fail:
            raise OSError("the database is locked")
        return self.data.get(key)

    def set(self, key: str, until: datetime.datetime) -> None:
        self.data[key] = until


def test_a_cooldown_store_lets_a_long_cooldown_survive_a_restart() -> None:
    store = DictStore()
    client = ClockedClient()
    first = CommandDispatcher(client, cooldown_store=store)  # type: ignore[arg-type]
    ran: list[str] = []
    daily = Command("daily", lambda ctx: ran.append("paid"), cooldown=86400, cooldown_per=BucketType.MEMBER)
    first.add(daily)
    run(client, "!daily")
    assert store.data == {"daily:member:S1:U1": T0 + datetime.timedelta(days=1)}
    first.close()

    restarted = ClockedClient()  # a new process: the monotonic clock starts again, the wall clock goes on
    restarted.clock = ManualClock(start=0.0, utc=T0 + datetime.timedelta(hours=1))
    again = CommandDispatcher(restarted, cooldown_store=store)  # type: ignore[arg-type]
    again.add(daily)
    assert run(restarted, "!daily").replies == ["!daily is on cooldown: try again in 23 h."]
    assert run(restarted, "!daily", server_id="S2").replies == []  # another server: another member
    restarted.clock.advance(23 * 3600)
    run(restarted, "!daily")
    assert ran == ["paid", "paid", "paid"]


def test_a_failing_cooldown_store_fails_the_invocation_visibly_and_takes_no_turn() -> None:
    store = DictStore()
    client = ClockedClient()
    bot = CommandDispatcher(client, cooldown_store=store)  # type: ignore[arg-type]
    ran: list[str] = []
    bot.add(Command("daily", lambda ctx: ran.append("paid"), cooldown=86400))
    store.fail = True
    refused = run(client, "!daily")
    assert refused.replies == ["Sorry, !daily failed because of an internal error."]
    error = client.errors[-1]
    assert isinstance(error, CommandInvokeError) and isinstance(error.original, OSError)
    store.fail = False
    run(client, "!daily")  # the failed attempt took no turn
    assert ran == ["paid"]


def test_max_concurrency_refuses_one_run_too_many_and_it_costs_no_cooldown_turn() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type]
    inside, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def backup(ctx: CommandContext) -> None:
        ran.append(ctx.message.author.id)
        inside.set()
        release.wait(5)

    bot.add(Command("backup", backup, cooldown=5, max_concurrency=1, concurrency_per="server"))
    first = threading.Thread(target=run, args=(client, "!backup"), name="test-backup")
    first.start()
    try:
        assert inside.wait(5)
        refused = run(client, "!backup", author=FakeUser("BOB"))
        assert refused.replies == ["!backup is busy (one run at a time per server): try again when it is done."]
        error = client.errors[-1]
        assert isinstance(error, MaxConcurrencyReached) and error.number == 1 and error.per is BucketType.SERVER
        run(client, "!backup", author=FakeUser("CAROL"), server_id="S2")  # another server: its own place
    finally:
        release.set()
        first.join(5)
    run(client, "!backup", author=FakeUser("BOB"))  # the refusal took no cooldown turn
    assert ran == ["U1", "CAROL", "BOB"]


def test_help_shows_who_shares_a_cooldown_and_the_concurrency_limit() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type]

    @bot.command(cooldown=86400, cooldown_per=BucketType.MEMBER, max_concurrency=2)
    def daily(ctx: CommandContext) -> None:
        """Collect your daily coins."""

    assert bot.help_text("daily") == (
        "!daily: Collect your daily coins. (cooldown 1 d per member; at most 2 at a time for everyone)")
    command = client.commands["daily"]
    copy = pickle.loads(pickle.dumps(Command("d", print, cooldown=5, cooldown_per="channel", max_concurrency=3)))
    assert (copy.cooldown_per, copy.max_concurrency, copy.concurrency_per) == (
        BucketType.CHANNEL, 3, BucketType.DEFAULT)
    assert "cooldown_per=BucketType.MEMBER" in repr(command) and "max_concurrency=2" in repr(command)
    loaded = Command.from_object({"name": "m", "execute": print, "cooldown": 1, "cooldown_per": "server",
                                  "max_concurrency": 1, "concurrency_per": "user"})
    assert loaded is not None and (loaded.cooldown_per, loaded.concurrency_per) == (BucketType.SERVER, BucketType.USER)


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(1e-10, "0.1 s"), (9.95, "10 s"), (9.999, "10 s"), (59.5, "1 min"), (3599.5, "1 h"),
     (86340.5, "1 d"), (86370, "1 d"), (86399, "1 d"), (86339, "23 h 59 min")],
)
def test_a_wait_at_a_unit_s_boundary_is_said_in_the_larger_unit(seconds: float, words: str) -> None:
    assert duration_text(seconds) == words  # never "24 h", "10.0 s" or "0.0 s"


def test_a_cooldown_beyond_the_last_datetime_is_stored_as_the_last_datetime() -> None:
    store = DictStore()
    client = ClockedClient()
    bot = CommandDispatcher(client, cooldown_store=store)  # type: ignore[arg-type]
    ran: list[str] = []
    bot.add(Command("once", lambda ctx: ran.append("ran"), cooldown=1e12))  # "once ever", some 31 700 years
    assert run(client, "!once").replies == [] and ran == ["ran"]
    assert store.data == {"once:user:U1": datetime.datetime.max.replace(tzinfo=datetime.timezone.utc)}
    assert run(client, "!once").replies[0].startswith("!once is on cooldown: try again in ")


def test_a_clock_object_is_taken_for_clock_and_bad_limits_are_refused_at_the_call_site() -> None:
    client = ClockedClient()
    own = ManualClock(start=5.0)
    bot = CommandDispatcher(client, clock=own)  # type: ignore[arg-type] # a Clock, as client.clock is
    bot.add(Command("roll", lambda ctx: None, cooldown=10))
    run(client, "!roll")
    own.advance(4)
    assert run(client, "!roll").replies == ["!roll is on cooldown: try again in 6.0 s."]
    with pytest.raises(TypeError, match="clock must be a function returning seconds or a clock with now"):
        CommandDispatcher(client, clock=5.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cooldown_store must have get"):
        CommandDispatcher(client, cooldown_store=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cooldown_store must have get"):
        CommandDispatcher(client, cooldown_store={"daily": None})  # type: ignore[arg-type] # a dict has get, not set(key, until)


def test_a_cooldown_too_large_for_a_float_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="cooldown must be a finite number of seconds"):
        Command("x", print, cooldown=10**400)


def test_a_cooldown_ends_when_the_clock_reaches_it_in_steps_despite_float_rounding() -> None:
    client = ClockedClient()
    bot = CommandDispatcher(client)  # type: ignore[arg-type]
    ran: list[str] = []
    bot.add(Command("roll", lambda ctx: ran.append("roll"), cooldown=3))
    run(client, "!roll")
    for _ in range(10):
        client.clock.advance(0.3)  # from 50 s, 0.3 ten times is 52.99999999999997
    assert run(client, "!roll").replies == [] and ran == ["roll", "roll"]


def test_a_client_without_a_clock_times_cooldowns_with_the_real_clock(client: FakeClient) -> None:
    bot = CommandDispatcher(client)  # type: ignore[arg-type] # a stand-in client with no .clock, no clock=
    ran: list[str] = []
    bot.add(Command("roll", lambda ctx: ran.append("roll"), cooldown=60))
    assert run(client, "!roll").replies == []
    assert run(client, "!roll").replies[0].startswith("!roll is on cooldown: try again in ")
    assert ran == ["roll"]
