"""A sample bot whose parts are cogs loaded from extensions.

The bank (``samples/cogs/bank.py``) is an extension: a module whose ``setup(client)`` adds a
:class:`~service_client.Cog` with commands (``!balance``, ``!daily``, ``!give``,
``!leaderboard``), a listener (a welcome for new members) and an hourly task. This file makes
the client and its :class:`~service_client.CommandDispatcher`, which runs the cogs' commands,
loads the extension, and adds ``!reload [name]`` for the server's administrators: edit
``cogs/bank.py`` while the bot runs, then type ``!reload`` to run the new code. A reload
that fails keeps the running version and says why.

Run it against any service (or ``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/bank_bot.py
"""

from __future__ import annotations

import logging
import os
import pathlib
import sys
from typing import Any

from service_client import Client, CommandContext, CommandDispatcher, CommandError, ExtensionError

#: The extensions the bot loads at start.
EXTENSIONS = ("cogs.bank",)


def build_client(**options: Any) -> Client:
    """The bank bot: a client with a ``!`` dispatcher and its extensions loaded.

    Args:
        **options: Passed to :class:`~service_client.Client` (``base_url``, ``socket_url``).
    """
    folder = str(pathlib.Path(__file__).resolve().parent)
    if folder not in sys.path:  # the extensions are modules of this folder
        sys.path.insert(0, folder)
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")

    @commands.command(requires="ADMINISTRATOR", hidden=True)
    def reload(ctx: CommandContext, name: str = EXTENSIONS[0]) -> None:
        """Run an extension's new code."""
        try:
            ctx.client.reload_extension(name)
        except ExtensionError as error:
            raise CommandError(f"Reload failed: {error}") from error
        ctx.reply(f"Reloaded {name}.")

    for name in EXTENSIONS:
        client.load_extension(name)
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
