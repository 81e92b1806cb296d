"""A moderation bot built only on the public API of service_client.

- ``!purge <count>`` deletes the channel's last ``count`` messages (1 to 100, the command
  itself not counted); for members with MANAGE_MESSAGES.
- ``!kick <member> [reason...]`` kicks a member, with the reason as typed (apostrophes and
  all); for members with KICK_MEMBERS.
- ``!ban <member> [reason...]`` bans one; for members with BAN_MEMBERS.
- ``!warn <member> <reason...>`` records a warning; for the staff roles (``Moderator``,
  ``Admin``), in a server.
- ``!warnings <member>`` lists a member's warnings; staff only, in the ``mod-log`` channel,
  and hidden from ``!help``.

A member who may not use a command is told why ("You need one of the roles Admin,
Moderator to use !warn."); the bot logs each refusal it hears as ``command_error``.

The bot needs the same permissions on the server. Run it against any service (or
``python -m service_client emulator --seed demo``)::

    SERVICE_TOKEN=... SERVICE_BASE_URL=http://127.0.0.1:PORT/api/v2 \\
    SERVICE_SOCKET_URL=http://127.0.0.1:PORT python samples/moderation_bot.py
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from service_client import (
    Client,
    CommandContext,
    CommandDispatcher,
    CommandError,
    GatewayError,
    Member,
    Permissions,
    guild_only,
    has_any_role,
    in_channel,
)

#: Most messages one ``!purge`` deletes.
PURGE_MAX = 100
#: The roles whose members may warn.
STAFF_ROLES = ("Moderator", "Admin")
#: The channel where the staff reads the warnings.
MOD_LOG = "mod-log"

_log = logging.getLogger("moderation_bot")


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

    warnings: dict[str, list[str]] = {}  # user id -> reasons, in order
    warnings_lock = threading.Lock()  # commands of different channels run on different threads

    @commands.command()
    @guild_only()
    @has_any_role(*STAFF_ROLES)
    def warn(ctx: CommandContext, member: Member, *, reason: str) -> None:
        """Warn a member, with a reason: !warn @carol spamming links."""
        with warnings_lock:
            count = len(warnings.setdefault(member.id, [])) + 1
            warnings[member.id].append(reason)
        ctx.reply(f"Warned {member.display_name} ({count} warning{'s' if count != 1 else ''}): {reason}")

    @commands.command("warnings", hidden=True)
    @has_any_role(*STAFF_ROLES)
    @in_channel(MOD_LOG)
    def list_warnings(ctx: CommandContext, member: Member) -> None:
        """List a member's warnings: !warnings @carol."""
        with warnings_lock:
            reasons = list(warnings.get(member.id, []))
        lines = [f"{i}. {reason}" for i, reason in enumerate(reasons, 1)]
        ctx.reply(f"{member.display_name}: " + ("; ".join(lines) if lines else "no warnings."))

    @client.on("command_error")
    def refused(error: CommandError) -> None:
        _log.info("refused %s: %s", error.command_name, error)

    return client


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    bot = build_client(
        **{key: value for key, value in (("base_url", os.environ.get("SERVICE_BASE_URL")),
                                         ("socket_url", os.environ.get("SERVICE_SOCKET_URL"))) if value}
    )
    bot.run(os.environ["SERVICE_TOKEN"])
