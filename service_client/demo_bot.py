"""The bot of ``python -m service_client demo``: ``!ping`` and ``!echo`` on a command dispatcher.

It ships inside the package so that the demo runs from an installed wheel.
``samples/ping_bot.py`` in a source checkout is a fuller example (command
files, a permission check, a cooldown).

It also runs on its own against any service, configured by environment
variables::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python -m service_client.demo_bot
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from .client import Client
from .dispatcher import CommandContext, CommandDispatcher

__all__ = ["build_client", "main"]


def build_client(**options: Any) -> Client:
    """Create the demo bot's client with its two commands; not logged in.

    Args:
        **options: Keyword options for :class:`~service_client.Client`
            (``base_url``, ``socket_url``, ``workers``, ...).

    Returns:
        The client, with a :class:`~service_client.CommandDispatcher` for the
        prefix ``!`` listening on it.
    """
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")

    @commands.command(aliases=["p"])
    def ping(ctx: CommandContext) -> None:
        """Check that the bot is alive: it answers Pong!"""
        ctx.reply("Pong!")

    @commands.command()
    def echo(ctx: CommandContext, text: str, *more: str) -> None:
        """Repeat the text after the command."""
        ctx.reply(" ".join((text, *more)))

    return client


def main() -> int:
    """Run the bot with ``SERVICE_TOKEN`` (and optional ``SERVICE_BASE_URL``, ``SERVICE_SOCKET_URL``).

    Returns:
        0 after Ctrl-C, 2 when ``SERVICE_TOKEN`` is not set or only one of the two URLs is.
    """
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = os.environ.get("SERVICE_TOKEN")
    if not token:
        print("set SERVICE_TOKEN to the bot's token", file=sys.stderr)
        return 2
    try:
        client = build_client(
            base_url=os.environ.get("SERVICE_BASE_URL") or None,
            socket_url=os.environ.get("SERVICE_SOCKET_URL") or None,
        )
    except ValueError as error:  # one URL set without the other: name both
        print(f"{error}; set SERVICE_BASE_URL and SERVICE_SOCKET_URL together", file=sys.stderr)
        return 2
    client.run(token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
