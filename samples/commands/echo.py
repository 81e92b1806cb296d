"""``!echo <text>``: answer with the text.

A command file for :func:`service_client.commands.load_commands` (loaded by
``samples/ping_bot.py``). It uses only the public API. The bot's dispatcher
calls ``command.execute(message, args)`` with the :class:`Message` that
carried the command and the words after the command name.
"""

from __future__ import annotations

from typing import Any

from service_client.commands import Command


def execute(message: Any, args: list[str]) -> None:
    """Reply with the words after ``!echo`` joined by single spaces.

    The service refuses empty messages, so ``!echo`` alone gets a usage line.
    """
    text = " ".join(args)
    message.reply(text if text else "Usage: !echo <text>")


command = Command(
    name="echo",
    execute=execute,
    description="Repeat the text after the command: !echo <text>",
)
