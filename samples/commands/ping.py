"""``!ping``: answer ``Pong!``.

A command file for :func:`service_client.commands.load_commands` (loaded by
``samples/ping_bot.py``). It uses only the public API. The bot's dispatcher
calls ``command.execute(message, args)`` with the :class:`Message` that
carried the command and the words after the command name.
"""

from __future__ import annotations

from typing import Any

from service_client.commands import Command


def execute(message: Any, args: list[str]) -> None:
    """Reply ``Pong!`` in the message's channel (arguments are ignored)."""
    message.reply("Pong!")


command = Command(
    name="ping",
    execute=execute,
    description="Check that the bot is alive: it answers Pong!",
)
