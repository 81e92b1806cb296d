"""A sample bot built only on the public API of service_client.

It loads its commands from ``samples/commands/`` with ``client.load_commands``
and dispatches messages that start with ``!`` itself (the library does no
dispatch): ``!ping`` answers ``Pong!``, ``!echo <text>`` answers the text,
``!help`` lists the commands.

Run it against any service (or ``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/ping_bot.py
"""

from __future__ import annotations

import logging
import os
import pathlib
import sys
from typing import Any

from service_client import Client

#: Messages starting with this are commands.
PREFIX = "!"
#: Where the command files live.
COMMANDS_DIR = pathlib.Path(__file__).resolve().with_name("commands")


def build_client(**options: Any) -> Client:
    """Create the bot's client, load its commands and attach its message handler.

    Args:
        **options: Keyword options for :class:`service_client.Client`
            (``base_url``, ``socket_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    client.load_commands(COMMANDS_DIR)

    @client.on("message_create")
    def on_message(message: Any) -> None:
        if message.author is None or message.author.bot:
            return
        if not message.content.startswith(PREFIX):
            return
        name, *args = message.content[len(PREFIX):].split() or [""]
        command = client.commands.get(name.lower())
        if command is None:
            command = client.commands.find(lambda c: name.lower() in c.aliases)
        if command is not None:
            command.execute(message, args)

    return client


def main() -> int:
    """Run the bot with ``SERVICE_TOKEN`` (and optional ``SERVICE_BASE_URL``, ``SERVICE_SOCKET_URL``)."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = os.environ.get("SERVICE_TOKEN")
    if not token:
        print("set SERVICE_TOKEN to the bot's token", file=sys.stderr)
        return 2
    client = build_client(
        base_url=os.environ.get("SERVICE_BASE_URL") or None,
        socket_url=os.environ.get("SERVICE_SOCKET_URL") or None,
    )
    client.run(token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
