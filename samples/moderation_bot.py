"""A moderation bot built only on the public API of service_client.

- ``!purge <count>`` deletes the channel's last ``count`` messages (1 to 100, the command
  itself not counted); for members with MANAGE_MESSAGES.
- ``!kick <member> [reason...]`` kicks a member, with the reason as typed (apostrophes and
  all); for members with KICK_MEMBERS.
- ``!ban <member> [reason...]`` bans one; for members with BAN_MEMBERS.

The bot needs the same permissions on the server. Run it against any service (or
``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/moderation_bot.py
"""

from __future__ import annotations

import logging
import os
from typing import Any

from service_client import (
    Client,
    CommandContext,
    CommandDispatcher,
    CommandError,
    GatewayError,
    Member,
    Permissions,
)

#: Most messages one ``!purge`` deletes.
PURGE_MAX = 100


def build_client(**options: Any) -> Client:
    """Create the bot's client with its moderation commands.

    Args:
        **options: Keyword options for :class:`service_client.Client` (``base_url``, ...).

    Returns:
        The client, not yet logged in.
    """
    client = Client(**options)
    commands = CommandDispatcher(client, prefix="!")

    @commands.command(requires=Permissions.MANAGE_MESSAGES)
    def purge(ctx: CommandContext, count: int) -> None:
        """Delete the channel's last messages: !purge 20."""
        if not 1 <= count <= PURGE_MAX:
            raise CommandError(f"The count must be between 1 and {PURGE_MAX}.")
        channel = ctx.channel or client.channels.fetch(ctx.channel_id)
        gone = channel.purge(count, before=ctx.message)
        ctx.message.delete()
        ctx.send(f"Deleted {len(gone)} message{'s' if len(gone) != 1 else ''}.")

    @commands.command(requires=Permissions.KICK_MEMBERS)
    def kick(ctx: CommandContext, member: Member, *, reason: str | None = None) -> None:
        """Kick a member, with a reason: !kick @carol spamming links."""
        try:
            member.kick(reason=reason)
        except GatewayError as error:
            ctx.reply(f"Could not kick {member.display_name} ({error.code}).")
            return
        ctx.reply(f"Kicked {member.display_name}" + (f": {reason}" if reason else "."))

    @commands.command(requires=Permissions.BAN_MEMBERS)
    def ban(ctx: CommandContext, member: Member, *, reason: str | None = None) -> None:
        """Ban a member, with a reason: !ban @carol raiding."""
        try:
            member.ban(reason=reason)
        except GatewayError as error:
            ctx.reply(f"Could not ban {member.display_name} ({error.code}).")
            return
        ctx.reply(f"Banned {member.display_name}" + (f": {reason}" if reason else "."))

    return client


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    bot = build_client(
        **{key: value for key, value in (("base_url", os.environ.get("SERVICE_BASE_URL")),
                                         ("socket_url", os.environ.get("SERVICE_SOCKET_URL"))) if value}
    )
    bot.run(os.environ["SERVICE_TOKEN"])
