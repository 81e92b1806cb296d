"""``!help`` (alias ``!h``): list the loaded commands.

A command file for :func:`service_client.commands.load_commands` (loaded by
``samples/ping_bot.py``). It uses only the public API. The bot's dispatcher
calls ``command.execute(message, args)`` with the :class:`Message` that
carried the command and the words after the command name.

The commands are read from ``message.client.commands``: every model keeps a
reference to its client, and the client keeps the commands that
``client.load_commands`` loaded, indexed by name. ``!help <name>`` describes
one command (found by name or alias).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service_client.commands import Command

#: The prefix the sample bot dispatches on (only used to format the answer).
PREFIX = "!"


def _line(cmd: Command) -> str:
    aliases = ", ".join(PREFIX + alias for alias in cmd.aliases)
    head = PREFIX + cmd.name + (f" ({aliases})" if aliases else "")
    return f"{head}: {cmd.description}" if cmd.description else head


def describe(commands: Mapping[str, Command], args: list[str]) -> str:
    """The help text for ``commands``: one line per command, sorted by name.

    With an argument, only the command whose name or alias it is (the prefix
    may be included), or a short "unknown command" line.
    """
    if args:
        word = args[0].removeprefix(PREFIX)
        for cmd in commands.values():
            if cmd.matches(word):
                return _line(cmd)
        return f"Unknown command: {PREFIX}{word}. Try {PREFIX}help."
    lines = [_line(commands[name]) for name in sorted(commands)]
    return "Commands:\n" + "\n".join(lines) if lines else "No commands are loaded."


def execute(message: Any, args: list[str]) -> None:
    """Reply with the list of commands (or the description of ``args[0]``)."""
    message.reply(describe(message.client.commands, args))


command = Command(
    name="help",
    execute=execute,
    aliases=("h",),
    description="List the commands, or describe one: !help [command]",
)
