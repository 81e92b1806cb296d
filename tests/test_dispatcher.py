"""CommandDispatcher without I/O: parsing, lookup, permissions, cooldowns, help, error reporting.

A fake client and fake messages stand in for the real ones; the end-to-end
behaviour over the emulator is in ``tests/test_dispatcher_e2e.py``.
"""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

from service_client import (
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
    MissingPermissions,
    NoPrivateMessage,
    Permissions,
)


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
