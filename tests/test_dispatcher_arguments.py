"""Typed command arguments without I/O: reading the words, converters, Optional and defaults,
Literal and Enum choices, the rest of the line, custom converters, bad-argument replies.

The client is a recording fake State with the real managers and caches (``tests/state/fakes.py``),
so the model converters read real caches and their requests are answered from a table; replies
land in ``client.sent``. The end-to-end behaviour over the emulator is in
``tests/test_dispatcher_arguments_e2e.py``.
"""

from __future__ import annotations

import enum
import logging
import pickle
import types
from typing import Any, Literal, Optional, Union

import pytest

try:  # tests/ is not a package: pytest puts it on sys.path
    from state.fakes import FakeState, channel_rec, member_rec, message_rec, role_rec, server_rec, user_rec
except ImportError:  # pragma: no cover - if tests/ becomes a package
    from tests.state.fakes import (  # type: ignore[no-redef]
        FakeState,
        channel_rec,
        member_rec,
        message_rec,
        role_rec,
        server_rec,
        user_rec,
    )

from service_client import (
    BadArgumentError,
    Channel,
    Collection,
    Command,
    CommandArgumentError,
    CommandContext,
    CommandDispatcher,
    CommandInvokeError,
    CommandSyntaxError,
    CommandUsageError,
    Converter,
    Member,
    Message,
    Role,
    ServiceAPIError,
    User,
)
from service_client.dispatcher.parsing import ArgumentReader, UnclosedQuote


class BotState(FakeState):
    """The fake State as the dispatcher's client: commands, listeners, ``error`` and ``command_error`` events, replies."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: Collection[str, Command] = Collection()
        self.user = self.users.upsert(user_rec("BOT", "bot", isBot=True))
        self._listeners: dict[str, list[Any]] = {}
        self.errors: list[BaseException] = []
        self.command_errors: list[BaseException] = []

    def on(self, event: str, listener: Any) -> Any:
        self._listeners.setdefault(event, []).append(listener)
        return listener

    def off(self, event: str, listener: Any) -> None:
        self._listeners[event].remove(listener)

    def listeners(self, event: str) -> list[Any]:
        return list(self._listeners.get(event, []))

    def dispatch(self, event: str, *args: Any, key: Any = None) -> None:
        assert event in ("command_error", "error")
        (self.errors if event == "error" else self.command_errors).append(args[0])

    def replies(self) -> list[Any]:
        return [options for _channel, options, _kwargs in self.sent]


@pytest.fixture
def client() -> BotState:
    """A server S1 with channels #general (C1) and #random (C2), roles Moderator (R1) and Muted (R2),
    and cached members: alice (U1, the author), carol (U2, nickname Caz) and dave (U3)."""
    state = BotState()
    state.guilds._store(state.build_guild(server_rec("S1", "Test Server", owner="U1")))
    for cid, name in (("C1", "general"), ("C2", "random")):
        state.channels.cache[cid] = Channel(state, channel_rec(cid, name, "S1"))
    state.channels.cache["C9"] = Channel(state, channel_rec("C9", "elsewhere", "S2"))
    guild = state.guilds.cache["S1"]
    for rid, name in (("R1", "Moderator"), ("R2", "Muted")):
        guild.roles.cache[rid] = Role(state, role_rec(rid, sid="S1", name=name), server_id="S1")
    for uid, name, nickname in (("U1", "alice", None), ("U2", "carol", "Caz"), ("U3", "dave", None)):
        state.store_member(member_rec(uid, "S1", user=user_rec(uid, name), nickname=nickname), "S1")
    state.on("error", lambda error: None)  # a listener: refusals are emitted (see the logging tests)
    return state


@pytest.fixture
def bot(client: BotState) -> CommandDispatcher:
    return CommandDispatcher(client, prefix="!")  # type: ignore[arg-type]


def say(client: BotState, content: str, *, server_id: str | None = "S1", author: str = "U1") -> Message:
    """Deliver a message of ``author`` (alice by default) to the dispatcher."""
    record = message_rec("M1", content, "C1" if server_id else "DM1", server_id, author=user_rec(author))
    message = Message(client, record)
    for listener in client.listeners("message_create"):
        listener(message)
    return message


def last_reply(client: BotState) -> Any:
    return client.replies()[-1]


# -- reading the words ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("she didn't stop", ["she", "didn't", "stop"]),
        ("'cause it's late", ["'cause", "it's", "late"]),
        ("rock 'n roll", ["rock", "'n", "roll"]),
        ('"two words" and \'two more\'', ["two words", "and", "two more"]),
        ("“smart quotes” don’t ‘break it’", ["smart quotes", "don’t", "break it"]),
        ('"a \\"quoted\\" word" it\\\'s', ['a "quoted" word', "it's"]),
        ("C:\\Users\\bob a\\ b", ["C:\\Users\\bob", "a b"]),
        ('"" empty', ["", "empty"]),
        ("  spaced   out \n lines  ", ["spaced", "out", "lines"]),
    ],
)
def test_words_are_read_with_quotes_where_balanced_and_apostrophes_as_text(text, words):
    assert ArgumentReader(text).read_all() == words


@pytest.mark.parametrize("text", ['"never closed', "ok “never closed", 'a "b c'])
def test_an_opening_double_quote_must_be_closed(text):
    with pytest.raises(UnclosedQuote, match="No closing quotation"):
        ArgumentReader(text).read_all()


def test_an_apostrophe_never_breaks_a_command(client, bot):
    seen: list[tuple[str, ...]] = []

    @bot.command()
    def echo(ctx: CommandContext, *words: str) -> None:
        seen.append(words)

    say(client, "!echo she didn't stop, 'cause it's late")
    assert seen == [("she", "didn't", "stop,", "'cause", "it's", "late")]
    assert client.errors == [] and client.replies() == []


def test_the_rest_of_the_line_is_passed_exactly_as_typed(client, bot):
    seen: list[tuple[Any, str, list[str]]] = []

    @bot.command()
    def kick(ctx: CommandContext, member: Member, *, reason: str) -> None:
        seen.append((member, reason, ctx.args))

    say(client, '!kick <@U2>   she didn\'t stop:  "spam"   in \\ #general  ')
    ((member, reason, texts),) = seen
    assert isinstance(member, Member) and (member.id, member.server_id) == ("U2", "S1")
    assert reason == 'she didn\'t stop:  "spam"   in \\ #general'
    assert texts == ["<@U2>", reason]  # ctx.args: the text of each argument, before conversion
    say(client, '!kick carol "unbalanced')  # a quote inside the rest of the line is text too
    assert seen[-1][1:] == ('"unbalanced', ["carol", '"unbalanced'])
    assert client.errors == []


def test_an_unclosed_double_quote_for_a_word_is_a_syntax_error(client, bot):
    @bot.command()
    def pair(ctx: CommandContext, first: str, second: str) -> None:
        raise AssertionError("must not run")

    say(client, '!pair one "two three')
    (error,) = client.errors
    assert isinstance(error, CommandSyntaxError) and error.command_name == "pair"
    assert last_reply(client).startswith("Could not read the arguments of !pair: No closing quotation")


def test_quotes_group_the_words_of_a_positional_argument(client, bot):
    seen: list[tuple[str, str]] = []

    @bot.command()
    def rename(ctx: CommandContext, old: str, new: str) -> None:
        seen.append((old, new))

    say(client, "!rename \"old name\" 'new name'")
    assert seen == [("old name", "new name")]


# -- built-in converters ------------------------------------------------------------------------------


def test_numbers_are_converted_from_the_annotations(client, bot):
    seen: list[tuple[Any, ...]] = []

    @bot.command()
    def roll(ctx: CommandContext, sides: int, times: float = 1.0) -> None:
        seen.append((sides, times))

    say(client, "!roll 20")
    say(client, "!roll -3 2.5")
    say(client, "!roll +7 1e2")
    assert seen == [(20, 1.0), (-3, 2.5), (7, 100.0)]
    assert [type(v) for v in seen[0]] == [int, float]


@pytest.mark.parametrize(
    ("text", "parameter", "expected"),
    [
        ("!roll ten", "<sides: integer>", "a whole number"),
        ("!roll 2.5", "<sides: integer>", "a whole number"),
        ("!roll 1_000", "<sides: integer>", "a whole number"),
        ("!roll 6 nan", "[times: number]", "a number"),
        ("!roll 6 inf", "[times: number]", "a number"),
        ("!roll 6 1_0.5", "[times: number]", "a number"),
    ],
)
def test_a_bad_number_gets_a_reply_naming_the_parameter(client, bot, text, parameter, expected):
    @bot.command()
    def roll(ctx: CommandContext, sides: int, times: float = 1.0) -> None:
        raise AssertionError("must not run")

    say(client, text)
    (error,) = client.errors
    given = text.split()[-1]
    assert isinstance(error, CommandArgumentError) and isinstance(error, CommandUsageError)
    assert (error.parameter, error.expected, error.given) == (parameter[1:].split(":")[0], expected, given)
    assert error.usage == "!roll <sides: integer> [times: number]"
    assert last_reply(client) == (
        f'Bad argument {parameter}: expected {expected}, got "{given}". Usage: !roll <sides: integer> [times: number]'
    )
    assert isinstance(error.__cause__, ValueError)


@pytest.mark.parametrize(
    ("word", "value"),
    [("yes", True), ("YES", True), ("true", True), ("on", True), ("1", True),
     ("no", False), ("False", False), ("off", False), ("0", False)],
)
def test_booleans_accept_yes_no_true_false_on_off_1_0(client, bot, word, value):
    seen: list[bool] = []

    @bot.command()
    def notify(ctx: CommandContext, enabled: bool) -> None:
        seen.append(enabled)

    say(client, f"!notify {word}")
    assert seen == [value] and type(seen[0]) is bool


def test_a_bad_boolean_names_the_accepted_words(client, bot):
    @bot.command()
    def notify(ctx: CommandContext, enabled: bool) -> None:
        raise AssertionError("must not run")

    say(client, "!notify maybe")
    assert last_reply(client) == (
        'Bad argument <enabled: yes/no>: expected yes or no (yes/no, true/false, on/off, 1/0), got "maybe". '
        "Usage: !notify <enabled: yes/no>"
    )


def test_str_and_unannotated_parameters_are_text_as_before(client, bot):
    seen: list[tuple[Any, ...]] = []
    bot.add(Command("old", lambda ctx, a, b="x", *more: seen.append((a, b, more))))

    @bot.command()
    def new(ctx: CommandContext, a: str, b: Any = "x") -> None:
        seen.append((a, b))

    say(client, "!old 1 2 3 4")
    say(client, "!new 1")
    assert seen == [("1", "2", ("3", "4")), ("1", "x")]
    assert bot.usage("old") == "!old <a> [b] [more...]"


# -- members, users, roles, channels --------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed", ["<@U2>", "<@!U2>", "U2", "carol#0001", "carol", "Caz"]
)
def test_a_member_is_found_by_mention_id_or_exact_name_in_the_cache(client, bot, typed):
    seen: list[Member] = []

    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        seen.append(member)

    say(client, f"!whois {typed}")
    assert [m.id for m in seen] == ["U2"] and seen[0] is client.members.get("S1", "U2")
    assert client.requests == []  # all from the cache


def test_a_member_not_cached_is_fetched_once(client, bot):
    seen: list[Member] = []

    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        seen.append(member)

    client.routes[("GET", "/servers/S1/members/U7")] = member_rec("U7", "S1", user=user_rec("U7", "erin"))
    say(client, "!whois <@U7>")
    assert [m.id for m in seen] == ["U7"]
    assert [r[:2] for r in client.requests] == [("GET", "/servers/S1/members/U7")]
    say(client, "!whois erin")  # now cached: found by name, no request
    assert [m.id for m in seen] == ["U7", "U7"] and len(client.requests) == 1


def test_a_name_may_start_with_at_and_a_user_seen_before_is_fetched_as_a_member(client, bot):
    seen: list[Member] = []

    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        seen.append(member)

    client.users.upsert(user_rec("U7", "erin"))  # seen as a message author: a cached user, not a cached member
    client.routes[("GET", "/servers/S1/members/U7")] = member_rec("U7", "S1", user=user_rec("U7", "erin"))
    say(client, "!whois @carol")
    say(client, "!whois @erin")
    assert [m.id for m in seen] == ["U2", "U7"]
    assert [r[1] for r in client.requests] == ["/servers/S1/members/U7"]  # no search: the id is known


def test_a_member_name_not_cached_is_searched_then_fetched(client, bot):
    seen: list[Member] = []

    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        seen.append(member)

    def members(route: Any, params: Any, json: Any) -> Any:
        assert params == {"search": "frank"}
        return {"members": [member_rec("U8", "S1", user=user_rec("U8", "frank")),
                            member_rec("U9", "S1", user=user_rec("U9", "frankie"))]}

    client.routes[("GET", "/servers/S1/members")] = members
    client.routes[("GET", "/servers/S1/members/U8")] = member_rec("U8", "S1", user=user_rec("U8", "frank"))
    say(client, "!whois frank")
    assert [m.id for m in seen] == ["U8"] and seen[0].joined_at is not None  # the whole member
    assert [r[1] for r in client.requests] == [
        "/servers/S1/members/frank", "/servers/S1/members", "/servers/S1/members/U8"]


def test_an_unknown_member_gets_a_bad_argument_reply(client, bot):
    @bot.command()
    def kick(ctx: CommandContext, member: Member, *, reason: str = "no reason") -> None:
        raise AssertionError("must not run")

    client.routes[("GET", "/servers/S1/members")] = {"members": []}
    say(client, "!kick nobody spam")
    (error,) = client.errors
    assert isinstance(error, CommandArgumentError)
    assert (error.parameter, error.given) == ("member", "nobody")
    assert last_reply(client) == (
        'Bad argument <member>: expected a member of this server (a mention, an id or an exact name), got "nobody": '
        "no member of this server has that name or id. Usage: !kick <member> [reason...]"
    )
    say(client, "!kick <@U404>")
    assert client.errors[-1].given == "<@U404>"
    assert last_reply(client).endswith(": that user is not a member of this server. Usage: !kick <member> [reason...]")


def test_an_ambiguous_name_asks_for_a_mention(client, bot):
    client.store_member(member_rec("U5", "S1", user=user_rec("U5", "carol", tag="0002")), "S1")

    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        ctx.reply(member.id)

    say(client, "!whois carol")
    assert "several members are named carol: use a mention or an id" in last_reply(client)
    say(client, "!whois carol#0002")  # name#tag is exact
    assert last_reply(client) == "U5"


def test_members_and_roles_are_refused_in_a_direct_message(client, bot):
    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        raise AssertionError("must not run")

    @bot.command()
    def role(ctx: CommandContext, role: Role) -> None:
        raise AssertionError("must not run")

    say(client, "!whois <@U2>", server_id=None)
    assert "members belong to a server, and this message is a direct message" in last_reply(client)
    say(client, "!role Muted", server_id=None)
    assert "roles belong to a server" in last_reply(client)
    assert [type(e) for e in client.errors] == [CommandArgumentError, CommandArgumentError]


def test_a_user_is_found_in_the_cache_or_fetched(client, bot):
    seen: list[User] = []

    @bot.command()
    def who(ctx: CommandContext, user: User) -> None:
        seen.append(user)

    client.routes[("GET", "/users/U20")] = {"user": user_rec("U20", "zoe")}
    for typed in ("<@U3>", "U3", "dave", "dave#0001", "<@U20>"):
        say(client, f"!who {typed}", server_id=None)
    assert [u.id for u in seen] == ["U3", "U3", "U3", "U3", "U20"]
    assert all(isinstance(u, User) for u in seen)
    assert [r[1] for r in client.requests] == ["/users/U20"]
    say(client, "!who <@U21>", server_id=None)
    assert last_reply(client).endswith('got "<@U21>": no user has that id. Usage: !who <user>')


def test_a_role_is_found_by_mention_id_or_name_fetching_the_roles_once_on_a_miss(client, bot):
    seen: list[Role] = []

    @bot.command()
    def role(ctx: CommandContext, role: Role) -> None:
        seen.append(role)

    for typed in ("<@&R1>", "R2", "Muted", '"Moderator"'):
        say(client, f"!role {typed}")
    assert [r.id for r in seen] == ["R1", "R2", "R2", "R1"] and client.requests == []

    client.routes[("GET", "/servers/S1/roles")] = {"roles": [role_rec("R3", sid="S1", name="Fresh Role")]}
    say(client, '!role "Fresh Role"')
    assert seen[-1].id == "R3" and [r[1] for r in client.requests] == ["/servers/S1/roles"]
    say(client, "!role <@&R404>")
    assert last_reply(client).endswith(": no role of this server has that name or id. Usage: !role <role>")


def test_a_channel_is_found_by_mention_id_or_name_of_this_server_only(client, bot):
    seen: list[Channel] = []

    @bot.command()
    def topic(ctx: CommandContext, channel: Channel, *, text: str) -> None:
        seen.append(channel)

    for typed in ("<#C2>", "C2", "#random", "random", "general"):
        say(client, f"!topic {typed} hello")
    assert [c.id for c in seen] == ["C2", "C2", "C2", "C2", "C1"] and client.requests == []

    client.routes[("GET", "/servers/S1/categories")] = {"categories": [], "uncategorizedChannels": []}
    say(client, "!topic <#C9> hello")  # cached, but of another server
    (error,) = client.errors
    assert isinstance(error, CommandArgumentError) and error.parameter == "channel"
    assert last_reply(client) == (
        'Bad argument <channel>: expected a channel of this server (a mention, an id or an exact name), got "<#C9>": '
        "no channel of this server has that name or id. Usage: !topic <channel> <text...>"
    )
    assert [r[1] for r in client.requests] == ["/servers/S1/categories"]  # looked again after one listing


def test_a_channel_not_cached_is_found_after_listing_the_servers_channels(client, bot):
    seen: list[Channel] = []

    @bot.command()
    def topic(ctx: CommandContext, channel: Channel) -> None:
        seen.append(channel)

    client.routes[("GET", "/servers/S1/categories")] = {
        "categories": [], "uncategorizedChannels": [channel_rec("C5", "news", None)]}
    say(client, "!topic #news")
    assert [(c.id, c.server_id) for c in seen] == [("C5", "S1")]


def test_a_failed_request_of_a_converter_is_an_internal_error_not_a_bad_argument(client, bot, caplog):
    @bot.command()
    def whois(ctx: CommandContext, member: Member) -> None:
        raise AssertionError("must not run")

    failure = ServiceAPIError(500, "/servers/S1/members/U7", '{"error": "boom"}')
    client.routes[("GET", "/servers/S1/members/U7")] = failure
    with caplog.at_level("ERROR", logger="service_client.dispatcher"):
        say(client, "!whois <@U7>")
    (error,) = client.errors
    assert isinstance(error, CommandInvokeError) and error.original is failure
    assert last_reply(client) == "Sorry, !whois failed because of an internal error."
    assert any(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


# -- Optional, defaults, Union -------------------------------------------------------------------------


def test_optional_and_defaulted_parameters_take_their_default_when_absent(client, bot):
    seen: list[tuple[Any, ...]] = []

    @bot.command()
    def ban(ctx: CommandContext, member: Member, days: Optional[int], *, reason: str = "no reason") -> None:
        seen.append((member.id, days, reason))

    @bot.command()
    def mute(ctx: CommandContext, member: Member | None = None, minutes: int = 10) -> None:
        seen.append((member.id if member else None, minutes))

    say(client, "!ban carol")
    say(client, "!ban carol 7")
    say(client, "!ban carol 7 spam again")
    say(client, "!ban carol spam again")  # "spam" is no number: days is None, the word goes to reason
    say(client, "!mute")
    say(client, "!mute dave 5")
    say(client, "!mute 5")  # "5" is no member: member is None, the word goes to minutes
    assert seen == [
        ("U2", None, "no reason"), ("U2", 7, "no reason"), ("U2", 7, "spam again"), ("U2", None, "spam again"),
        (None, 10), ("U3", 5), (None, 5),
    ]
    assert bot.usage("ban") == "!ban <member> [days: integer] [reason...]"
    assert bot.usage("mute") == "!mute [member] [minutes: integer]"
    assert client.errors == []


def test_a_skipped_optional_word_that_nothing_takes_is_reported_for_that_parameter(client, bot):
    @bot.command()
    def limit(ctx: CommandContext, count: Optional[int] = None) -> None:
        raise AssertionError("must not run")

    say(client, "!limit lots")
    (error,) = client.errors
    assert isinstance(error, CommandArgumentError) and (error.parameter, error.given) == ("count", "lots")
    assert last_reply(client) == 'Bad argument [count: integer]: expected a whole number, got "lots". Usage: !limit [count: integer]'


def test_a_union_tries_each_type_in_order(client, bot):
    seen: list[Any] = []

    @bot.command()
    def target(ctx: CommandContext, what: Union[Member, Role, int]) -> None:
        seen.append(what)

    for typed in ("carol", "Muted", "42"):
        say(client, f"!target {typed}")
    client.routes[("GET", "/servers/S1/members")] = {"members": []}
    client.routes[("GET", "/servers/S1/roles")] = {"roles": []}
    say(client, "!target nothing")
    assert [type(v) for v in seen] == [Member, Role, int] and seen[2] == 42
    assert bot.usage("target") == "!target <what: member or role or integer>"
    assert isinstance(client.errors[-1], CommandArgumentError)


# -- Literal and Enum --------------------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_literal_choices_are_matched_and_shown_in_the_usage(client, bot):
    seen: list[Any] = []

    @bot.command()
    def mode(ctx: CommandContext, mode: Literal["on", "off"], level: Literal[1, 2, 3] = 1) -> None:
        seen.append((mode, level))

    say(client, "!mode on")
    say(client, "!mode OFF 3")
    say(client, "!mode on +2")
    assert seen == [("on", 1), ("off", 3), ("on", 2)]
    assert bot.usage("mode") == "!mode <mode: on|off> [level: 1|2|3]"
    say(client, "!mode maybe")
    error = client.errors[-1]
    assert isinstance(error, CommandArgumentError) and error.expected == "one of on, off"
    assert last_reply(client) == 'Bad argument <mode: on|off>: expected one of on, off, got "maybe". Usage: !mode <mode: on|off> [level: 1|2|3]'


def test_enum_members_are_chosen_by_value_or_name(client, bot):
    seen: list[Any] = []

    @bot.command()
    def paint(ctx: CommandContext, colour: Colour, level: Level = Level.LOW) -> None:
        seen.append((colour, level))

    say(client, "!paint red")
    say(client, "!paint GREEN high")
    assert seen == [(Colour.RED, Level.LOW), (Colour.GREEN, Level.HIGH)]
    assert bot.usage("paint") == "!paint <colour: red|green> [level: LOW|HIGH]"
    say(client, "!paint blue")
    assert client.errors[-1].expected == "one of red, green"


# -- annotations as strings ----------------------------------------------------------------------------------


COMMAND_MODULE = '''
from __future__ import annotations
from typing import Optional
from service_client import Member as TheMember

def whois(ctx, member: TheMember, times: Optional[Count] = None, *, note: str = ""):
    ctx.reply(f"{member.id} {times!r} {note}")

class Count(int):
    @classmethod
    def convert(cls, ctx, argument):
        return cls(int(argument))
'''


def test_string_annotations_are_resolved_against_the_functions_module(client, bot):
    module = types.ModuleType("a_command_module")
    exec(compile(COMMAND_MODULE, "a_command_module.py", "exec"), module.__dict__)
    bot.add(Command("whois", module.whois))
    say(client, "!whois Caz 3 hi there")
    assert last_reply(client) == "U2 3 hi there"
    assert bot.usage("whois") == "!whois <member> [times: count] [note...]"


def test_an_annotation_that_cannot_be_resolved_is_refused_when_the_command_is_added(bot):
    def broken(ctx: CommandContext, when: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match=r"command 'broken' cannot be called from a message: parameter 'when': "
                                        r"cannot resolve the annotation 'NotDefinedAnywhere'"):
        bot.command()(broken)
    assert "broken" not in bot.commands


def test_a_type_without_converter_is_refused_when_the_command_is_added(bot):
    class Thing:
        pass

    def use(ctx: CommandContext, thing: Thing) -> None:
        pass

    use.__annotations__["thing"] = Thing  # a local class: given as an object, not a string
    with pytest.raises(TypeError, match=r"parameter 'thing': no converter for Thing: register one with "
                                        r"dispatcher.converter\(Thing\)"):
        bot.add(Command("use", use))


@pytest.mark.parametrize(
    ("execute", "message"),
    [
        (lambda *, ctx: None, "must take the context as its first positional parameter"),
        (lambda ctx, *, rest, more: None, "keyword-only parameter 'more' can never be filled"),
        (lambda ctx, *words, rest: None, "keyword-only parameter 'rest' can never be filled"),
    ],
)
def test_signatures_no_message_could_fill_are_refused(bot, execute, message):
    with pytest.raises(TypeError, match=message):
        bot.add(Command("bad", execute))


def test_a_command_loaded_into_the_registry_that_cannot_run_is_an_internal_error(client, bot):
    def use(ctx: CommandContext, thing: object, *, a: str, b: int) -> None:
        pass

    client.commands["use"] = Command("use", use)  # as load_commands does: not checked by add()
    say(client, "!use x y")
    (error,) = client.errors
    assert isinstance(error, CommandInvokeError) and isinstance(error.original, TypeError)
    assert bot.usage("use") == "!use"


# -- custom converters ------------------------------------------------------------------------------------


class Duration:
    """A number of seconds, typed like 10m."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds


class Temperature(float):
    """A Converter protocol class: a classmethod convert, its own label and expected text."""

    label = "temperature"
    expected = "a temperature such as 21C or 70F"

    @classmethod
    def convert(cls, ctx: CommandContext, argument: str) -> Temperature:
        number, unit = argument[:-1], argument[-1:].upper()
        if unit not in ("C", "F"):
            raise BadArgumentError("end it with C or F")
        value = float(number)
        return cls(value if unit == "C" else (value - 32) * 5 / 9)


class Shout:
    """A Converter protocol class with an instance method: instantiated once."""

    instances = 0

    def __init__(self) -> None:
        Shout.instances += 1

    def convert(self, ctx: CommandContext, argument: str) -> str:
        return argument.upper() + "!"


def test_a_registered_converter_converts_its_type(client, bot):
    units = {"s": 1, "m": 60, "h": 3600}
    calls: list[tuple[Any, str]] = []

    @bot.converter(Duration, label="duration", expected="a duration such as 10m or 2h")
    def to_duration(ctx: CommandContext, argument: str) -> Duration:
        calls.append((ctx, argument))
        if argument[-1:] not in units or not argument[:-1].isdigit():
            raise BadArgumentError("write a number then s, m or h.")  # the reply has one full stop, not two
        return Duration(int(argument[:-1]) * units[argument[-1]])

    assert to_duration.__name__ == "to_duration"  # returned unchanged
    seen: list[int] = []

    @bot.command()
    def remind(ctx: CommandContext, after: Duration, *, text: str) -> None:
        seen.append(after.seconds)

    say(client, "!remind 10m stretch")
    assert seen == [600] and isinstance(calls[0][0], CommandContext) and calls[0][1] == "10m"
    assert bot.usage("remind") == "!remind <after: duration> <text...>"
    say(client, "!remind soon stretch")
    error = client.errors[-1]
    assert isinstance(error, CommandArgumentError) and isinstance(error.__cause__, BadArgumentError)
    assert last_reply(client) == (
        'Bad argument <after: duration>: expected a duration such as 10m or 2h, got "soon": '
        "write a number then s, m or h. Usage: !remind <after: duration> <text...>"
    )


def test_a_converters_plain_value_error_is_a_bad_argument_without_its_text(client, bot):
    def to_duration(ctx: CommandContext, argument: str) -> Duration:
        return Duration(int(argument))  # int("x"): an internal text, not for the author

    bot.converter(Duration)(to_duration)  # the call form

    @bot.command()
    def wait(ctx: CommandContext, time: Duration) -> None:
        raise AssertionError("must not run")

    say(client, "!wait x")
    error = client.errors[-1]
    assert isinstance(error, CommandArgumentError) and isinstance(error.__cause__, ValueError)
    assert last_reply(client) == 'Bad argument <time: duration>: expected duration, got "x". Usage: !wait <time: duration>'


def test_any_other_exception_of_a_converter_is_an_internal_error(client, bot):
    @bot.converter(Duration)
    def broken(ctx: CommandContext, argument: str) -> Duration:
        raise KeyError("bug")

    @bot.command()
    def wait(ctx: CommandContext, time: Duration) -> None:
        raise AssertionError("must not run")

    say(client, "!wait 5")
    (error,) = client.errors
    assert isinstance(error, CommandInvokeError) and isinstance(error.original, KeyError)


def test_converter_protocol_classes_convert_their_own_annotation(client, bot):
    seen: list[Any] = []
    Shout.instances = 0

    @bot.command()
    def heat(ctx: CommandContext, target: Temperature, *, message: Shout) -> None:
        seen.append((target, message))

    say(client, "!heat 21c hello there")
    say(client, "!heat 212F ok")
    assert seen == [(21.0, "HELLO THERE!"), (100.0, "OK!")] and isinstance(seen[0][0], Temperature)
    assert Shout.instances == 1
    assert bot.usage("heat") == "!heat <target: temperature> <message: shout...>"
    say(client, "!heat 20K x")
    assert last_reply(client) == (
        'Bad argument <target: temperature>: expected a temperature such as 21C or 70F, got "20K": end it with C or F. '
        "Usage: !heat <target: temperature> <message: shout...>"
    )


class Upper(Converter[str]):
    """The Converter protocol as an explicit base class."""

    def convert(self, ctx: CommandContext, argument: str) -> str:
        if not argument.isascii():
            raise TypeError("ASCII only")
        return argument.upper()


def test_the_converter_protocol_can_be_subclassed(client, bot):
    seen: list[str] = []

    @bot.command()
    def shout(ctx: CommandContext, *, text: Upper) -> None:
        seen.append(text)

    say(client, "!shout don't panic")
    say(client, "!shout ünïcode")
    assert seen == ["DON'T PANIC"]
    assert last_reply(client) == 'Bad argument <text: upper...>: expected upper, got "ünïcode". Usage: !shout <text: upper...>'


def test_a_converter_registered_later_replaces_a_builtin_for_commands_already_added(client, bot):
    seen: list[Any] = []

    @bot.command()
    def double(ctx: CommandContext, n: int) -> None:
        seen.append(n * 2)

    say(client, "!double 4")
    bot.converter(int, label="count")(lambda ctx, argument: len(argument))
    say(client, "!double four")
    assert seen == [8, 8] and bot.usage("double") == "!double <n: count>"


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [((None,), {}, TypeError), (("int",), {}, TypeError), ((int,), {"label": 3}, TypeError),
     ((int,), {"expected": ""}, ValueError), ((int,), {"label": " "}, ValueError)],
)
def test_converter_registration_checks_its_arguments(bot, args, kwargs, error):
    with pytest.raises(error):
        bot.converter(*args, **kwargs)


def test_a_converter_must_be_callable(bot):
    with pytest.raises(TypeError, match="callable"):
        bot.converter(Duration)("not a function")  # type: ignore[type-var]


# -- replies, logging and events ---------------------------------------------------------------------------------


def test_a_missing_argument_names_it_unless_nothing_was_typed(client, bot):
    @bot.command()
    def kick(ctx: CommandContext, member: Member, *, reason: str) -> None:
        raise AssertionError("must not run")

    say(client, "!kick carol")
    error = client.errors[-1]
    assert type(error) is CommandUsageError and error.parameter == "reason"
    assert last_reply(client) == "Missing <reason...>. Usage: !kick <member> <reason...>"
    say(client, "!kick")
    assert client.errors[-1].parameter == "member"
    assert last_reply(client) == "Usage: !kick <member> <reason...>"


def test_too_many_words_are_refused_with_the_usage(client, bot):
    @bot.command()
    def ping(ctx: CommandContext) -> None:
        raise AssertionError("must not run")

    say(client, "!ping extra words")
    error = client.errors[-1]
    assert type(error) is CommandUsageError and error.parameter is None
    assert last_reply(client) == "Too many arguments. Usage: !ping"


def test_a_bad_argument_is_not_logged_as_an_error(client, bot, caplog):
    @bot.command()
    def roll(ctx: CommandContext, sides: int) -> None:
        raise AssertionError("must not run")

    with caplog.at_level("DEBUG"):
        say(client, "!roll ten")
        say(client, "!roll")
    assert [type(e) for e in client.errors] == [CommandArgumentError, CommandUsageError]  # an error listener is set
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_without_an_error_listener_a_refusal_is_logged_at_info_and_not_emitted(client, bot, caplog):
    client._listeners.pop("error")

    @bot.command()
    def roll(ctx: CommandContext, sides: int) -> None:
        if sides == 0:
            raise ZeroDivisionError("a bug")

    with caplog.at_level("DEBUG"):
        say(client, "!roll ten")
    assert client.errors == [] and last_reply(client).startswith("Bad argument <sides: integer>")
    assert [type(e) for e in client.command_errors] == [CommandArgumentError]  # always emitted there
    (record,) = [r for r in caplog.records if r.name == "service_client.dispatcher"]
    assert record.levelno == logging.INFO and record.exc_info is None
    assert record.getMessage() == (
        'refused !roll from U1 in channel C1: Bad argument <sides: integer>: expected a whole number, got "ten". '
        "Usage: !roll <sides: integer>"
    )
    say(client, "!roll 0")  # a failure of the command's own code is still emitted
    assert [type(e) for e in client.errors] == [CommandInvokeError]


def test_argument_errors_pickle_with_their_attributes(client, bot):
    @bot.command()
    def roll(ctx: CommandContext, sides: int) -> None:
        pass

    say(client, "!roll ten")
    say(client, "!roll")
    for error in client.errors:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error) and str(copy) == str(error) and copy.context is None
        assert copy.parameter == "sides" and copy.usage == "!roll <sides: integer>"
    copy = pickle.loads(pickle.dumps(client.errors[0]))
    assert (copy.expected, copy.given) == ("a whole number", "ten")
    assert pickle.loads(pickle.dumps(BadArgumentError("why"))).args == ("why",)


def test_a_long_bad_argument_is_cut_in_the_reply_but_kept_whole_on_the_error(client, bot):
    @bot.command()
    def roll(ctx: CommandContext, *, sides: int) -> None:
        pass

    typed = "x" * 300
    say(client, f"!roll {typed}")
    error = client.errors[-1]
    assert error.given == typed
    assert f'got "{"x" * 99}…"' in last_reply(client)


def test_help_shows_typed_parameters(client, bot):
    @bot.command()
    def kick(ctx: CommandContext, member: Member, *, reason: str = "no reason") -> None:
        """Kick a member."""

    @bot.command()
    def mode(ctx: CommandContext, mode: Literal["on", "off"]) -> None:
        """Switch the mode."""

    @bot.command()
    def give(ctx: CommandContext, target: Member, role: Role, count: int = 1) -> None:
        """Give a role."""

    say(client, "!help")
    assert last_reply(client).splitlines() == [
        "Commands:",
        "!give <target: member> <role> [count: integer]: Give a role.",
        "!kick <member> [reason...]: Kick a member.",
        "!mode <mode: on|off>: Switch the mode.",
        "!help [command]: list the commands, or describe one.",
    ]
