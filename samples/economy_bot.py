"""A sample economy game bot: balances in SQLite, a daily reward, a shop, a banker role.

Its commands, listeners and hourly task are a cog in an extension, ``samples/cogs/economy.py``;
this file makes the client, its :class:`~service_client.CommandDispatcher`, and the SQLite
database both share (the dispatcher keeps the ``!work`` cooldown in it, the cog the balances),
and loads the extension. ``!reload`` (for administrators) runs the extension's new code while
the bot runs: the balances stay, they are in the database.

Run it against any service (or ``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT ECONOMY_DB=economy.sqlite python samples/economy_bot.py
"""

from __future__ import annotations

import logging
import os
import pathlib
import sys
import weakref
from typing import Any

from service_client import Client, CommandContext, CommandDispatcher, CommandError, ExtensionError

folder = str(pathlib.Path(__file__).resolve().parent)
if folder not in sys.path:  # the extensions are modules of this folder
    sys.path.insert(0, folder)

from cogs.economy import Ledger  # noqa: E402

#: The extension the bot loads at start.
EXTENSION = "cogs.economy"
_ledgers: weakref.WeakKeyDictionary[Client, Ledger] = weakref.WeakKeyDictionary()


def ledger_of(client: Client) -> Ledger:
    """The database of a client made by :func:`build_client` (the extension's ``setup`` reads it)."""
    return _ledgers[client]


def build_client(db_path: str | None = None, **options: Any) -> Client:
    """The economy bot: a client with a ``!`` dispatcher and the economy loaded.

    Args:
        db_path: The SQLite file (default: ``$ECONOMY_DB``, else ``economy.sqlite``).
        **options: Passed to :class:`~service_client.Client` (``base_url``, ``socket_url``).
    """
    ledger = Ledger(db_path or os.environ.get("ECONOMY_DB") or "economy.sqlite")
    client = Client(**options)
    _ledgers[client] = ledger
    client.on("client_close", lambda *_: ledger.close())
    commands = CommandDispatcher(client, prefix="!", cooldown_store=ledger)

    @commands.command(requires="ADMINISTRATOR", hidden=True)
    def reload(ctx: CommandContext) -> None:
        """Run the economy's new code."""
        try:
            ctx.client.reload_extension(EXTENSION)
        except ExtensionError as error:
            raise CommandError(f"Reload failed: {error}") from error
        ctx.reply(f"Reloaded {EXTENSION}.")

    client.load_extension(EXTENSION)
    return client


def main() -> int:
    """Run the bot with ``SERVICE_TOKEN`` (and optional ``SERVICE_BASE_URL``, ``SERVICE_SOCKET_URL``, ``ECONOMY_DB``)."""
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
