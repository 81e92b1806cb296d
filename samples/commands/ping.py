"""``!ping`` (alias ``!p``): answer ``Pong!``.

A command file for ``client.load_commands`` (loaded by ``samples/ping_bot.py``).
It uses only the public API. The bot's :class:`~service_client.CommandDispatcher`
calls ``execute(ctx)``: ``ctx`` is the :class:`~service_client.CommandContext`
of the message that carried the command, and the command takes no words.
"""

from __future__ import annotations

from service_client import CommandContext
from service_client.commands import Command


def execute(ctx: CommandContext) -> None:
    """Reply ``Pong!`` to the message."""
    ctx.reply("Pong!")


command = Command(
    name="ping",
    execute=execute,
    aliases=("p",),
    description="Check that the bot is alive: it answers Pong!",
)
