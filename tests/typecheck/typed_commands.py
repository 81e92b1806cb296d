"""Typed commands as a bot author's mypy sees them: converters keep their types (checked by
``tests/test_dispatcher_typing.py`` with ``mypy --strict``, against the installed package)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from types import ModuleType
from typing import Literal

from service_client import (
    BadArgumentError,
    Check,
    CheckFailure,
    Client,
    Cog,
    CommandArgumentError,
    CommandContext,
    CommandDispatcher,
    CommandError,
    Converter,
    ExtensionFailedError,
    Member,
    Message,
    MissingRole,
    Role,
    check,
    guild_only,
    has_any_role,
    has_permissions,
    has_role,
    in_channel,
)

client = Client()
commands = CommandDispatcher(client, prefix="!")


class Duration(datetime.timedelta):
    """A duration typed like 10m."""


@commands.converter(Duration, label="duration", expected="a duration such as 10m")
def to_duration(ctx: CommandContext, argument: str) -> Duration:
    if not argument.endswith("m") or not argument[:-1].isdigit():
        raise BadArgumentError("write a number of minutes, then m")
    return Duration(minutes=int(argument[:-1]))


class Upper(Converter[str]):
    """Text in capitals."""

    def convert(self, ctx: CommandContext, argument: str) -> str:
        return argument.upper()


@commands.command()
def remind(ctx: CommandContext, after: Duration, *, text: str) -> None:
    """Remind you of something."""
    ctx.reply(f"in {after.total_seconds():.0f} s: {text}")


@commands.command()
def give(ctx: CommandContext, member: Member, role: Role, mode: Literal["on", "off"], days: int | None = None) -> None:
    """Give a member a role."""
    ctx.reply(f"{member.display_name} {role.name} {mode} {days}")


@client.on("error")
def on_error(error: Exception) -> None:
    if isinstance(error, CommandArgumentError):
        parameter: str = error.parameter
        given: str = error.given
        print(parameter, given, error.expected, error.usage)


def is_owner(ctx: CommandContext) -> bool:
    return ctx.guild is not None and ctx.guild.owner_id == ctx.author.id


@commands.command(hidden=True, checks=[has_permissions(kick_members=True), lambda ctx: ctx.server_id is not None])
@guild_only()
@has_any_role("Staff", "Moderator")
@in_channel("modmail")
@check(is_owner, message="Only the owner may close tickets.")
def close(ctx: CommandContext, reason: str) -> None:
    """Close a ticket."""
    ctx.reply(f"closed: {reason}")


staff: Check = has_role("Staff")


@client.on("command_error")
def on_command_error(error: CommandError) -> None:
    if isinstance(error, MissingRole):
        roles: tuple[str, ...] = error.roles
        print(roles)
    elif isinstance(error, CheckFailure) and isinstance(error.context, CommandContext):
        print(error.context.author.username)


@client.on("message_create")
def relay(message: Message) -> None:
    handled: bool = commands.is_command(message)
    if not handled and message.server_id is None:
        print(message.content)


#: The check decorators return the function unchanged, with its type.
closed: Callable[[CommandContext, str], None] = close

#: The decorator returns the function unchanged, with its type.
kept: Callable[[CommandContext, str], Duration] = to_duration



class Economy(Cog, name="Money"):
    """A cog as a bot author types it."""

    def __init__(self, bank: dict[str, int]) -> None:
        self.bank = bank

    def cog_load(self) -> None:
        self.payday.start()
        running: bool = self.payday.is_running()
        print(running)

    def cog_check(self, ctx: CommandContext) -> bool:
        return ctx.server_id is not None

    @Cog.command(aliases=["bal"], cooldown=5)
    @guild_only()
    def balance(self, ctx: CommandContext, member: Member | None = None) -> None:
        """Show a balance."""
        ctx.reply(str(self.bank.get((member or ctx.author).id, 0)))

    @Cog.command
    def top(self, ctx: CommandContext) -> None:
        ctx.reply(", ".join(self.bank))

    @Cog.listener()
    def on_message_create(self, message: Message) -> None:
        self.bank.setdefault(message.author.id if message.author else "", 0)

    @Cog.every(hours=24)
    def payday(self) -> None:
        for user_id in self.bank:
            self.bank[user_id] += 10


economy: Economy = client.add_cog(Economy({}))
#: A cog's command method stays a method: a test may call it.
balance_of: Callable[[CommandContext, Member | None], None] = economy.balance
found: Cog | None = client.get_cog("Money")
modules: dict[str, ModuleType] = dict(client.extensions)
try:
    client.load_extension("bot.economy")
except ExtensionFailedError as failed:
    print(failed.name, failed.original)
