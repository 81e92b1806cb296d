"""``!echo <text>``: answer with the text.

A command file for ``client.load_commands`` (loaded by ``samples/ping_bot.py``).
It uses only the public API. The dispatcher splits the words after the command
like a shell line (``!echo "two  spaces"`` keeps them) and calls
``execute(ctx, *words)``; a message without any word gets the usage line
``!echo <text> [more...]``, generated from the parameters below.
"""

from __future__ import annotations

from service_client import CommandContext
from service_client.commands import Command


def execute(ctx: CommandContext, text: str, *more: str) -> None:
    """Reply with the words joined by single spaces."""
    ctx.reply(" ".join((text, *more)))


command = Command(
    name="echo",
    execute=execute,
    description="Repeat the text after the command.",
)
