"""A sample bot built only on the public API of service_client.

One :class:`~service_client.CommandDispatcher` (prefix ``!``) runs commands
from two places:

- the files of ``samples/commands/`` (``!ping``, ``!echo <text>``), loaded
  with ``client.load_commands``;
- the functions registered below with ``@commands.command``: ``!warn
  <user_id> [reason...]`` for members who hold the KICK_MEMBERS permission in
  the server, at most once per 10 seconds per moderator; and ``!remind
  <seconds> <text...>``, which answers at once and mentions its author with
  the text once the time has passed (``client.call_later``: nothing to
  cancel by hand at shutdown, ``destroy()`` cancels what is pending).

``!help`` is generated from the commands. A failed command (bad quoting,
missing arguments, missing permission, cooldown, an exception) is answered
in the channel and reaches the ``error`` listener below. A word that is no
command of this bot (``!nope``) is left alone: other bots in the server may
share the prefix.

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

from service_client import Client, CommandContext, CommandDispatcher, CommandError, Permissions

#: Messages starting with this are commands.
PREFIX = "!"
#: The longest reminder, seconds (a day).
MAX_REMIND_S = 86_400
#: Where the command files live.
COMMANDS_DIR = pathlib.Path(__file__).resolve().with_name("commands")

log = logging.getLogger("ping_bot")


def build_client(**options: Any) -> Client:
    """Create the bot's client with its commands and its error listener; not logged in.

    Args:
        **options: Keyword options for :class:`service_client.Client`
            (``base_url``, ``socket_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    client.load_commands(COMMANDS_DIR)
    commands = CommandDispatcher(client, prefix=PREFIX)

    @commands.command(requires=Permissions.KICK_MEMBERS, cooldown=10)
    def warn(ctx: CommandContext, user_id: str, *reason: str) -> None:
        """Warn a member of this server (moderators only)."""
        target = ctx.client.members.get(ctx.server_id or "", user_id)
        name = target.display_name if target is not None else f"<@{user_id}>"
        ctx.send(f"{name}, you have been warned: {' '.join(reason) or 'no reason given'}")

    @commands.command()
    def remind(ctx: CommandContext, seconds: float, text: str, *more: str) -> None:
        """Remind you of something in this channel after some seconds."""
        if not 0 < seconds <= MAX_REMIND_S:
            ctx.reply(f"The delay is a number of seconds from 1 to {MAX_REMIND_S}.")
            return
        note, mention, channel_id = " ".join((text, *more)), ctx.author.mention, ctx.channel_id
        # Scheduled before the answer: once the author reads it, the reminder is due.
        ctx.client.call_later(seconds, ctx.client.send_message, channel_id, f"{mention}, reminder: {note}")
        ctx.reply(f"I will remind you in {seconds:g} s.")

    @client.on("error")
    def on_error(error: BaseException) -> None:
        if isinstance(error, CommandError):  # already answered in the channel
            log.info("command refused: %s", error)
        else:
            log.error("error: %r", error)

    return client


def main() -> int:
    """Run the bot with ``SERVICE_TOKEN`` (and optional ``SERVICE_BASE_URL``, ``SERVICE_SOCKET_URL``)."""
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
