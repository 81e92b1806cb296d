"""Typed commands as a bot author's mypy sees them: converters keep their types (checked by
``tests/test_dispatcher_typing.py`` with ``mypy --strict``, against the installed package)."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Literal

from service_client import (
    BadArgumentError,
    Client,
    CommandArgumentError,
    CommandContext,
    CommandDispatcher,
    Converter,
    Member,
    Role,
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


#: The decorator returns the function unchanged, with its type.
kept: Callable[[CommandContext, str], Duration] = to_duration
